"""Queue isolation: how soon a critical job starts while 50,000 bulk jobs are backlogged, with
named queues (critical and bulk, each with its worker) and with one shared queue; with
`--priority`, in one shared queue with the critical jobs at priority 1 (most urgent) behind a
backlog at the default priority 2, beside the same queue without priorities.

Run: `uv run python -m bench.queue_isolation [--quick] [--priority]`. Uses
SKINCARE_BENCH_DATABASE_URL when set, otherwise starts an embedded PostgreSQL in a temporary
directory. One worker process's shape: a critical worker (concurrency 8) and a bulk worker (4)
on their own queues, or one worker (12) on one queue; a bulk job takes 10 ms (an I/O wait), a
critical job none. Critical jobs are enqueued one per commit at a steady rate; pickup runs from
the enqueue call (its commit included) to the handler's start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import timedelta

import anyio
from attrs import frozen
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs import (
    DEFAULT_PRIORITY,
    MOST_URGENT,
    Backend,
    Envelope,
    Job,
    Router,
    Worker,
    enqueue,
    new_job,
)
from skincare_postgres import create_engine, postgres_backend, upgrade

BULK_WORK = 0.010
TARGET_P99_MS = 50.0


@frozen
class Load:
    """What each run does."""

    backlog: int
    rate: float
    seconds: float


@frozen
class Result:
    """One run's row of the table."""

    label: str
    sent: int
    pickups_ms: list[float]
    bulk_done: int
    seconds: float

    def cells(self) -> list[str]:
        """The row as table cells; a job never picked up makes the percentiles 'over the run'."""
        got = sorted(self.pickups_ms)
        missed = self.sent - len(got)
        over = f"> {self.seconds * 1000:,.0f} (not picked up)"
        p50 = _ms(statistics.median(got)) if got and len(got) * 2 > self.sent else over
        p99 = _ms(_p99(got)) if got and missed == 0 else over
        worst = _ms(got[-1]) if got and missed == 0 else over
        rate = f"{self.bulk_done / self.seconds:,.0f}"
        return [self.label, f"{len(got)}/{self.sent}", p50, p99, worst, rate]


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98] if len(values) > 1 else 0.0


def _ms(value: float) -> str:
    return f"{value:,.1f}"


async def _backlog(backend: Backend, queue: str, count: int) -> None:
    for start in range(0, count, 1000):
        jobs = [new_job("bulk", n=str(n)) for n in range(start, min(count, start + 1000))]
        await backend.sink.enqueue_many([Envelope(job, queue) for job in jobs])


LABELS = {
    "named": "named queues (critical, bulk)",
    "shared": "one shared queue",
    "priority": "one shared queue, critical at priority 1",
}


async def run(url: str, load: Load, *, layout: str) -> Result:
    """Backlog the bulk jobs, start the workers, enqueue critical jobs for `load.seconds`.
    `layout`: `named`, `shared`, or `priority` (shared, the critical jobs most urgent)."""
    shared = layout != "named"
    urgency = MOST_URGENT if layout == "priority" else DEFAULT_PRIORITY
    engine = create_engine(url, pool_size=5)
    critical, bulk = ("default", "default") if shared else ("critical", "bulk")
    started: dict[str, float] = {}
    bulk_done = 0

    async def on_critical(job: Job) -> None:
        started[str(job.payload["n"])] = time.perf_counter()

    async def on_bulk(job: Job) -> None:
        nonlocal bulk_done
        await anyio.sleep(BULK_WORK)
        bulk_done += 1

    router = Router()
    router.register("critical", on_critical)
    router.register("bulk", on_bulk)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("TRUNCATE jobs"))
        async with postgres_backend(engine, queues=dict.fromkeys((critical, bulk))) as backend:
            await _backlog(backend, bulk, load.backlog)
            async with anyio.create_task_group() as tg:
                for worker in _workers(backend, router, shared=shared):
                    tg.start_soon(worker.run)
                await anyio.sleep(0.5)  # every worker is listening and the backlog is moving
                counted_from = bulk_done
                sent = await _enqueue_critical(backend, critical, load, urgency)
                await anyio.sleep(0.5)  # the last critical jobs' pickup
                tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    pickups = [(started[n] - at) * 1000 for n, at in sent.items() if n in started]
    return Result(LABELS[layout], len(sent), pickups, bulk_done - counted_from, load.seconds + 0.5)


def _workers(backend: Backend, router: Router, *, shared: bool) -> list[Worker]:
    grace = timedelta(seconds=2)
    if shared:
        return [Worker(queue=backend.queue(), router=router, concurrency=12, shutdown_grace=grace)]
    return [
        Worker(queue=backend.queue("critical"), router=router, concurrency=8, shutdown_grace=grace),
        Worker(queue=backend.queue("bulk"), router=router, concurrency=4, shutdown_grace=grace),
    ]


async def _enqueue_critical(
    backend: Backend, queue: str, load: Load, priority: int
) -> dict[str, float]:
    sent: dict[str, float] = {}
    start = time.perf_counter()
    for n in range(int(load.rate * load.seconds)):
        await anyio.sleep(max(0.0, start + n / load.rate - time.perf_counter()))
        sent[str(n)] = time.perf_counter()
        await enqueue(backend.queue(queue), new_job("critical", n=str(n)), priority=priority)
    return sent


def table(results: list[Result], load: Load) -> str:
    """The results side by side, as a Markdown table under its title."""
    title = (
        f"Critical pickup with {load.backlog:,} bulk jobs backlogged "
        f"({load.rate:.0f} critical jobs/s for {load.seconds:.0f} s; ms from the enqueue call)"
    )
    head = ["queues", "picked up", "p50 ms", "p99 ms", "max ms", "bulk jobs/s meanwhile"]
    lines = [f"## {title}", "", _row(head), _row(["---"] * len(head))]
    return "\n".join(lines + [_row(r.cells()) for r in results])


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    """Parse arguments, run both layouts on one server, print the table and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 jobs backlogged, 3 s")
    parser.add_argument(
        "--priority", action="store_true", help="one queue, critical jobs at priority 1"
    )
    args = parser.parse_args()
    layouts = ("priority", "shared") if args.priority else ("named", "shared")
    load = Load(5_000, 20.0, 3.0) if args.quick else Load(50_000, 20.0, 20.0)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        results = [anyio.run(_run_one, url, load, layout) for layout in layouts]
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print(table(results, load))
    first = sorted(results[0].pickups_ms)
    if first and len(first) == results[0].sent:
        p99 = _p99(first)
        verdict = "under" if p99 < TARGET_P99_MS else "NOT under"
        label = results[0].label
        print(f"\n{label}: critical p99 {p99:.1f} ms, {verdict} {TARGET_P99_MS:.0f} ms")


async def _run_one(url: str, load: Load, layout: str) -> Result:
    return await run(url, load, layout=layout)


if __name__ == "__main__":
    main()
