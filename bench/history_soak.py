"""Job history under a steady load with a short retention: the table's size over time.

Run: `uv run python -m bench.history_soak [--seconds S] [--rate R] [--retention S]
[--report S] [--prune-every S] [--rebuild-every S] [--quick]`. A producer enqueues `--rate`
no-op jobs a second (default 1,000, in batches every 100 ms) on the Postgres queue; one worker
(32 slots, receive batch 50) runs them with the history on; a `HistoryCleaner` prunes done
jobs older than `--retention` (default 60 s) every `--prune-every` (default 10 s) and rebuilds
the argument index every `--rebuild-every` (default 120 s; a service does it daily),
autovacuum at the server's defaults. Every `--report` seconds (default 30) it prints the
history's rows, the size of job_history with its indexes and of jobs, the jobs done per second
over the window, the backlog, and how many times autovacuum has run on job_history. Past the
first retention the size should stay flat. --quick: 60 s, retention 20 s, reports every 10 s.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

import anyio
import attrs
import psycopg

from bench.embedded import database_url
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.history import HistoryCleaner, Retention
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.history import PostgresJobHistory

_SIZES = """
SELECT (SELECT count(*) FROM job_history) AS history_rows,
    pg_total_relation_size('job_history') AS history_bytes,
    pg_relation_size('job_history') AS heap_bytes,
    pg_total_relation_size('jobs') AS jobs_bytes,
    (SELECT count(*) FROM jobs) AS backlog,
    (SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'job_history') AS vacuums
"""


@attrs.frozen
class Shape:
    """The run: how long, how many jobs a second, the retention, how often to report and prune."""

    seconds: float
    rate: int
    retention: float
    report: float
    prune_every: float
    rebuild_every: float


@attrs.define
class Counter:
    """Jobs the handler ran."""

    done: int = 0


async def produce(queue: PostgresQueue, shape: Shape) -> None:
    """`shape.rate` jobs a second, a batch every 100 ms, each with an order id."""
    batch, started, sent = max(1, shape.rate // 10), time.perf_counter(), 0
    while True:
        envelopes = [Envelope(new_job("soak", order_id=str(sent + n))) for n in range(batch)]
        await queue.enqueue_many(envelopes)
        sent += batch
        await anyio.sleep(max(0.0, started + sent / shape.rate - time.perf_counter()))


async def report(url: str, shape: Shape, counter: Counter) -> None:
    """A table row every `shape.report` seconds until the run ends."""
    print(
        "| t (s) | history rows | job_history MB (heap + indexes) | heap MB | jobs MB | done/s"
        " | backlog | autovacuums |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as c:
        began, last = time.perf_counter(), 0
        while True:
            await anyio.sleep(shape.report)
            cursor = await c.execute(_SIZES)
            rows, history, heap, jobs, backlog, vacuums = (await cursor.fetchone()) or (0,) * 6
            elapsed = time.perf_counter() - began
            rate = (counter.done - last) / shape.report
            last = counter.done
            print(
                f"| {elapsed:.0f} | {rows:,} | {history / 2**20:.1f} | {heap / 2**20:.1f}"
                f" | {jobs / 2**20:.1f}"
                f" | {rate:,.0f} | {backlog:,} | {vacuums} |",
                flush=True,
            )


async def print_indexes(url: str) -> None:
    """Each index of job_history and its size at the end."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as c:
        cursor = await c.execute(
            "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index"
            " WHERE indrelid = 'job_history'::regclass ORDER BY 1"
        )
        sizes = ", ".join(f"{name} {size / 2**20:.1f} MB" for name, size in await cursor.fetchall())
    print(f"\nindexes at the end: {sizes}")


async def run(shape: Shape) -> None:
    """The load, the worker, the cleaner and the reports, for `shape.seconds`."""
    with database_url() as url:
        upgrade(url)
        engine = create_engine(url, pool_size=5)
        counter = Counter()

        async def soak(job: Job) -> None:
            counter.done += 1

        router = Router()
        router.register("soak", soak)
        retention = Retention(done=timedelta(seconds=shape.retention))
        history = PostgresJobHistory(engine, rebuild_every=timedelta(seconds=shape.rebuild_every))
        cleaner = HistoryCleaner(history, retention, every=timedelta(seconds=shape.prune_every))
        try:
            async with (
                PostgresQueue(engine, poll_interval=timedelta(seconds=0.2)) as producer,
                PostgresQueue(engine, poll_interval=timedelta(seconds=0.2)) as consumer,
                anyio.create_task_group() as tg,
            ):
                worker = Worker(queue=consumer, router=router, concurrency=32, receive_batch=50)
                for task in (worker.run, cleaner.run):
                    tg.start_soon(task)
                tg.start_soon(produce, producer, shape)
                tg.start_soon(report, url, shape, counter)
                await anyio.sleep(shape.seconds + 1)
                tg.cancel_scope.cancel()
            await print_indexes(url)
        finally:
            await engine.dispose()


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="how long (600)")
    parser.add_argument("--rate", type=int, default=1000, help="jobs offered a second (1000)")
    parser.add_argument("--retention", type=float, default=60.0, help="done retention, s (60)")
    parser.add_argument("--report", type=float, default=30.0, help="report every S s (30)")
    parser.add_argument("--prune-every", type=float, default=10.0, help="prune every S s (10)")
    parser.add_argument(
        "--rebuild-every", type=float, default=120.0, help="rebuild the argument index, s (120)"
    )
    parser.add_argument("--quick", action="store_true", help="60 s, retention 20 s, report 10 s")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.retention, args.report = 60.0, 20.0, 10.0
    shape = Shape(
        args.seconds, args.rate, args.retention, args.report, args.prune_every, args.rebuild_every
    )
    print(
        f"{shape.rate:,} jobs/s for {shape.seconds:.0f} s, done retention {shape.retention:.0f} s,"
        f" pruned every {shape.prune_every:.0f} s, argument index rebuilt every"
        f" {shape.rebuild_every:.0f} s\n",
        flush=True,
    )
    anyio.run(run, shape)


if __name__ == "__main__":
    main()
