"""What metrics cost the worker: drain throughput with metrics on and off, side by side.

Run: `uv run python -m bench.metrics_cost [--quick] [--reps N]`. Each rep drains the same no-op
jobs twice, metrics off then on (the order alternates per rep), on the Postgres queue (embedded
server unless SKINCARE_BENCH_DATABASE_URL is set) and on the in-memory queue (the engine alone:
the worst case, no I/O to hide the cost). "On" is the real thing: PrometheusJobMetrics, the
depth collector, and a scraper hitting /metrics every second during the drain
(Prometheus scrapes every 15 s by default).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx
from prometheus_client import CollectorRegistry
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.embedded import database_url
from bench.noop_drain import drain_seconds
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import new_job
from skincare_core.jobs.metrics import JobMetrics
from skincare_core.jobs.ports import QueueStats
from skincare_core.testing.jobs import InMemoryQueue
from skincare_postgres import PostgresQueue, create_engine, upgrade
from skincare_postgres.stats import PostgresQueueStats
from skincare_prometheus import PrometheusJobMetrics, QueueDepthCollector, WorkerEndpoint

SCRAPE_EVERY = 1.0
Drain = Callable[[JobMetrics | None], Awaitable[float]]


@asynccontextmanager
async def scraped_metrics(stats: QueueStats) -> AsyncIterator[JobMetrics]:
    """The worker's metrics as the process wires them, scraped every second meanwhile."""
    registry = CollectorRegistry()
    jobs = PrometheusJobMetrics(registry, queues=["default"])
    depth = QueueDepthCollector({"default": stats})
    registry.register(depth)
    endpoint = WorkerEndpoint(registry=registry, jobs=jobs, depth=depth)
    async with anyio.create_task_group() as tg:
        port = await tg.start(partial(endpoint.serve, host="127.0.0.1", port=0))
        tg.start_soon(_scrape, f"http://127.0.0.1:{port}/metrics")
        yield jobs
        tg.cancel_scope.cancel()


async def _scrape(url: str) -> None:
    async with httpx.AsyncClient() as client:
        while True:
            (await client.get(url)).raise_for_status()
            await anyio.sleep(SCRAPE_EVERY)


async def postgres_drain(engine: AsyncEngine, count: int, metrics: JobMetrics | None) -> float:
    """Seconds to drain `count` no-op jobs from the jobs table."""
    async with engine.begin() as conn:
        await conn.execute(text("TRUNCATE jobs"))
    async with PostgresQueue(engine) as queue:
        jobs = [Envelope(new_job("noop", n=str(n))) for n in range(count)]
        for i in range(0, count, 1000):
            await queue.enqueue_many(jobs[i : i + 1000])
        return await drain_seconds(queue, count, concurrency=16, batch=50, metrics=metrics)


async def memory_drain(count: int, metrics: JobMetrics | None) -> float:
    """Seconds to drain `count` no-op jobs from the in-memory queue."""
    queue = InMemoryQueue()
    for n in range(count):
        await queue.enqueue(new_job("noop", n=str(n)))
    return await drain_seconds(queue, count, concurrency=16, batch=50, metrics=metrics)


async def side_by_side(drain: Drain, stats: QueueStats, count: int, reps: int) -> tuple[float, ...]:
    """Median jobs/s off, median jobs/s on, and their ratio, over `reps` alternating pairs."""
    off: list[float] = []
    on: list[float] = []
    for rep in range(reps):
        for metrics_on in (rep % 2 == 1, rep % 2 == 0):
            if metrics_on:
                async with scraped_metrics(stats) as metrics:
                    on.append(count / await drain(metrics))
            else:
                off.append(count / await drain(None))
    rate_off, rate_on = statistics.median(off), statistics.median(on)
    return rate_off, rate_on, rate_on / rate_off


async def main(quick: bool, reps: int) -> None:
    """Both queues side by side, then the table."""
    count = 5_000 if quick else 20_000
    # The in-memory drain's depth comes from an empty queue: the engine's cost is what counts.
    memory = await side_by_side(partial(memory_drain, count), InMemoryQueue(), count, reps)
    rows = [("in-memory queue", memory)]
    with database_url() as url:
        upgrade(url)
        engine = create_engine(url)
        try:
            drain = partial(postgres_drain, engine, count)
            stats = PostgresQueueStats(engine, queue="default")
            rows.append(("Postgres queue", await side_by_side(drain, stats, count, reps)))
        finally:
            await engine.dispose()
    _print(rows, count, reps)


def _print(rows: list[tuple[str, tuple[float, ...]]], count: int, reps: int) -> None:
    print(f"drain {count:,} no-op jobs, concurrency 16, batch 50; median of {reps} reps each")
    print(f"{'queue':<18} {'metrics off':>14} {'metrics on':>14} {'on / off':>9}")
    for name, (off, on, ratio) in rows:
        print(f"{name:<18} {off:>10,.0f} j/s {on:>10,.0f} j/s {ratio:>8.1%}")
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="5,000 jobs instead of 20,000")
    parser.add_argument("--reps", type=int, default=5, help="pairs of drains (default 5)")
    args = parser.parse_args()
    anyio.run(main, args.quick, args.reps)
