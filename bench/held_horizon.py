"""Claims while a transaction holds the xmin horizon (issue 20, section 4): 800 jobs/s offered
for 4 minutes with an idle-in-transaction session open, claims from the floor against claims
that read the claim index from its start (as before the floor), one after the other.

Run: `uv run python -m bench.held_horizon [--quick] [--seconds S] [--rate R]`. A producer
enqueues batches of 10 at the rate; one worker (concurrency 20, receive batch 10) runs no-op
jobs. Printed per minute: jobs done per second, the worker's claim statement p50/p99 (timed
around the claim itself) and the backlog at the minute's end.
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
import psycopg

from bench.embedded import database_url
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.sink import PostgresSink


class TimedQueue(PostgresQueue):
    """A PostgresQueue that records how long each claim statement took (bench only)."""

    claims: list[tuple[float, float]]

    async def _claim_rows(self, limit: int) -> list[Message]:
        began = time.perf_counter()
        try:
            return await super()._claim_rows(limit)
        finally:
            self.claims.append((began, time.perf_counter() - began))


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
        await sink.enqueue_many([Envelope(new_job("noop"), "default") for _ in range(10)])
        batches += 1
        await anyio.sleep(max(0.0, start + batches * 10 / rate - now))


async def _backlog(url: str) -> int:
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url)) as conn:
        row = await (await conn.execute("SELECT count(*) FROM jobs")).fetchone()
    return int(row[0]) if row else 0


async def measure(url: str, seconds: float, rate: float, sweep: timedelta) -> list[str]:
    """One run; a table row per minute."""
    done: list[float] = []

    async def handler(_job: Job) -> None:
        done.append(time.perf_counter())

    router = Router()
    router.register("noop", handler)
    engine = create_engine(url)
    queue = TimedQueue(engine, claim_sweep_every=sweep)
    queue.claims = []
    try:
        async with held_horizon(url), queue, anyio.create_task_group() as tg:
            tg.start_soon(Worker(queue=queue, router=router, concurrency=20, receive_batch=10).run)
            start = time.perf_counter()
            rows = []
            async with anyio.create_task_group() as producer:
                producer.start_soon(_produce, PostgresSink(engine), seconds, rate)
                for minute_end in _minute_ends(seconds):
                    await anyio.sleep(max(0.0, start + minute_end - time.perf_counter()))
                    rows.append(_row(start, minute_end, done, queue.claims, await _backlog(url)))
            tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    return rows


def _minute_ends(seconds: float) -> list[float]:
    ends = [float(m) for m in range(60, int(seconds) + 1, 60)]
    return ends if ends and ends[-1] == seconds else [*ends, seconds]


def _row(
    start: float, end: float, done: list[float], claims: list[tuple[float, float]], backlog: int
) -> str:
    window = min(60.0, end)
    jobs = sum(1 for t in done if end - window <= t - start < end) / window
    took = [d * 1000 for t, d in claims if end - window <= t - start < end] or [0.0, 0.0]
    cuts = statistics.quantiles(took, n=100) if len(took) > 1 else took * 99
    return f"{end:.0f} | {jobs:,.0f} | {statistics.median(took):.2f} | {cuts[98]:.2f} | {backlog:,}"


async def main(seconds: float, rate: float) -> None:
    """Both runs on one embedded server, a fresh database state each, then the table."""
    variants = {
        "claims from the floor (sweep every 5 s)": timedelta(seconds=5),
        "every claim from the index's start": timedelta(0),
    }
    print(f"{rate:,.0f} jobs/s offered for {seconds:.0f} s, a transaction holding xmin throughout")
    with database_url() as url:
        upgrade(url)
        for label, sweep in variants.items():
            load = os.getloadavg()[0]
            rows = await measure(url, seconds, rate, sweep)
            print(f"\n{label} (load average {load:.2f} -> {os.getloadavg()[0]:.2f})\n")
            print("| s | jobs done/s | claim p50 ms | claim p99 ms | backlog |")
            print("| ---: | ---: | ---: | ---: | ---: |")
            for row in rows:
                print(f"| {row} |")
            await _empty(url)


async def _empty(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as conn:
        await conn.execute("DELETE FROM jobs")
        await conn.execute("VACUUM jobs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 s instead of 240 s")
    parser.add_argument("--seconds", type=float, default=240.0, help="length of each run")
    parser.add_argument("--rate", type=float, default=800.0, help="jobs offered per second")
    arguments = parser.parse_args()
    anyio.run(main, 20.0 if arguments.quick else arguments.seconds, arguments.rate)
