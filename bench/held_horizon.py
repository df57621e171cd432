"""Claims while a transaction holds the xmin horizon, in the shape of the public peer harness's
long-horizon run: 800 jobs/s offered to 32 worker slots; after a warm-up that ends with the
table vacuumed and analyzed in its steady state, an idle-in-transaction session holds the
horizon for 240 s, autovacuum at the server's defaults. Claims from the floor against claims
that read the claim index from its start (as before the floor), one after the other.

Run: `uv run python -m bench.held_horizon [--quick] [--hold S] [--rate R] [--workers N]
[--window S] [--warmup S] [--floor-only]`. A producer enqueues batches of 10 at the rate; one
worker (concurrency `--workers`, receive batch 10) runs no-op jobs. Printed per window of the
hold (30 s): jobs done per second, the claim statement's p50/p99 (timed around the claim
itself), the p99 wait from enqueue to start, the planner's row estimate of `jobs`
(pg_class.reltuples) and the backlog at the window's end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio
import attrs
import psycopg

from bench.embedded import database_url
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo


@attrs.frozen
class Shape:
    """The load: jobs offered per second, the worker's slots, the hold and the table's window."""

    hold: float
    rate: float
    workers: int
    window: float
    warmup: float


@attrs.define
class Record:
    """What one run saw: claim (start, seconds), job (start, wait seconds)."""

    claims: list[tuple[float, float]] = attrs.field(factory=list)
    done: list[tuple[float, float]] = attrs.field(factory=list)


class TimedQueue(PostgresQueue):
    """A PostgresQueue that records how long each claim statement took (bench only)."""

    record: Record

    async def _claim_rows(self, limit: int) -> list[Message]:
        began = time.perf_counter()
        try:
            return await super()._claim_rows(limit)
        finally:
            self.record.claims.append((began, time.perf_counter() - began))


@asynccontextmanager
async def held_horizon(url: str) -> AsyncIterator[None]:
    """`BEGIN; SELECT txid_current();` left open: vacuum removes nothing while it lasts."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url)) as conn:
        await conn.execute("SELECT txid_current()")
        yield
        await conn.rollback()


async def _produce(sink: PostgresSink, seconds: float, rate: float) -> None:
    start = time.perf_counter()
    batches = 0
    while (now := time.perf_counter()) - start < seconds:
        stamp = str(time.time())
        await sink.enqueue_many([Envelope(new_job("noop", at=stamp), "default") for _ in range(10)])
        batches += 1
        await anyio.sleep(max(0.0, start + batches * 10 / rate - now))


async def _table_state(url: str) -> tuple[float, int]:
    """The planner's row estimate of `jobs` (pg_class.reltuples) and the rows it holds."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url)) as conn:
        cursor = await conn.execute(
            "SELECT (SELECT reltuples FROM pg_class WHERE relname = 'jobs'),"
            " (SELECT count(*) FROM jobs)"
        )
        row = await cursor.fetchone()
    return (float(row[0]), int(row[1])) if row else (0.0, 0)


def _worker(queue: TimedQueue, shape: Shape) -> Worker:
    async def handler(job: Job) -> None:
        now = time.time()
        queue.record.done.append((time.perf_counter(), now - float(str(job.payload["at"]))))

    router = Router()
    router.register("noop", handler)
    return Worker(queue=queue, router=router, concurrency=shape.workers, receive_batch=10)


async def measure(url: str, shape: Shape, sweep: timedelta) -> list[str]:
    """One run: the warm-up unheld, then the hold; a table row per window of the hold."""
    engine = create_engine(url)
    queue = TimedQueue(engine, claim_sweep_every=sweep)
    queue.record = Record()
    try:
        async with queue, anyio.create_task_group() as tg:
            tg.start_soon(_worker(queue, shape).run)
            offered = shape.warmup + shape.hold
            tg.start_soon(_produce, PostgresSink(engine), offered, shape.rate)
            await anyio.sleep(shape.warmup)
            await _vacuum_analyze(url)
            async with held_horizon(url):
                rows = await _windows(url, shape, queue.record)
            tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    return rows


async def _vacuum_analyze(url: str) -> None:
    """The statistics of a table in its steady state, as a long warm-up leaves them."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as conn:
        await conn.execute("VACUUM ANALYZE jobs")


async def _windows(url: str, shape: Shape, record: Record) -> list[str]:
    start = time.perf_counter()
    rows = []
    for end in _window_ends(shape):
        await anyio.sleep(max(0.0, start + end - time.perf_counter()))
        state = await _table_state(url)
        rows.append(_row(start, end, min(shape.window, end), record, state))
    return rows


def _window_ends(shape: Shape) -> list[float]:
    ends = [shape.window * n for n in range(1, int(shape.hold // shape.window) + 1)]
    return ends if ends and ends[-1] == shape.hold else [*ends, shape.hold]


def _row(start: float, end: float, window: float, record: Record, state: tuple[float, int]) -> str:
    def inside(t: float) -> bool:
        return end - window <= t - start < end

    jobs = sum(1 for t, _ in record.done if inside(t)) / window
    took = _percentiles([d * 1000 for t, d in record.claims if inside(t)])
    waited = _percentiles([w for t, w in record.done if inside(t)])
    estimate, backlog = state
    return (
        f"{end:.0f} | {jobs:,.0f} | {took[0]:.2f} | {took[1]:.2f} | {waited[1]:.2f}"
        f" | {estimate:,.0f} | {backlog:,}"
    )


def _percentiles(values: list[float]) -> tuple[float, float]:
    """p50 and p99 (zeros for an empty window)."""
    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    return statistics.median(values), statistics.quantiles(values, n=100)[98]


async def main(shape: Shape, floor_only: bool) -> None:
    """The runs on one server, a fresh table state each, then their tables."""
    variants = {"claims from the floor (sweep every 5 s)": timedelta(seconds=5)}
    if not floor_only:
        variants["every claim from the index's start"] = timedelta(0)
    print(
        f"{shape.rate:,.0f} jobs/s offered to {shape.workers} worker slots: {shape.warmup:.0f} s"
        f" of warm-up, then {shape.hold:.0f} s with a transaction holding xmin"
    )
    with database_url() as url:
        upgrade(url)
        for label, sweep in variants.items():
            await _empty(url)
            load = _loadavg()
            rows = await measure(url, shape, sweep)
            print(f"\n{label} (load average {load} -> {_loadavg()})\n")
            print(
                "| s | jobs done/s | claim p50 ms | claim p99 ms | wait p99 s | row estimate"
                " | backlog |"
            )
            print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for row in rows:
                print(f"| {row} |")


def _loadavg() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


async def _empty(url: str) -> None:
    """No rows and no dead tuples; the statistics of an empty, never-analyzed table."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as conn:
        await conn.execute("TRUNCATE jobs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 10 s hold, 5 s windows")
    parser.add_argument("--hold", "--seconds", type=float, default=240.0, help="seconds held")
    parser.add_argument("--rate", type=float, default=800.0, help="jobs offered per second")
    parser.add_argument("--workers", type=int, default=32, help="the worker's concurrency")
    parser.add_argument("--window", type=float, default=30.0, help="seconds per table row")
    parser.add_argument(
        "--warmup",
        type=float,
        help="seconds before the hold (default: a quarter of the hold, at most 90)",
    )
    parser.add_argument("--floor-only", action="store_true", help="skip the sweep-every-claim run")
    arguments = parser.parse_args()
    hold, window = (10.0, 5.0) if arguments.quick else (arguments.hold, arguments.window)
    warmup = min(hold / 4, 90.0) if arguments.warmup is None else arguments.warmup
    shape = Shape(hold, arguments.rate, arguments.workers, window, warmup)
    anyio.run(main, shape, arguments.floor_only)
