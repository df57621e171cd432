"""Pickup latency while pg_terminate_backend kills every connection of the system twice a
second, beside the same load without the storm.

Run: `uv run python -m bench.terminate_storm [--quick]`. One producer enqueues a job every
20 ms on its own pool; one worker (concurrency 4) runs them; pickup is from the enqueue's
return to the handler's start. The storm kills the worker's claim and LISTEN connections and
the producer's pooled ones alike.
"""

from __future__ import annotations

import argparse
import os
import statistics

import anyio
import psycopg

from bench.embedded import database_url
from skincare_core.jobs import Envelope, Job, Router, Unavailable, Worker, new_job
from skincare_postgres import PostgresQueue, PostgresSink, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo

_KILL = (
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def _terminate(url: str) -> int:
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        row = conn.execute(_KILL).fetchone()
    return int(row[0]) if row else 0


async def _storm(url: str, seconds: float, killed: list[int]) -> None:
    deadline = anyio.current_time() + seconds
    while anyio.current_time() < deadline:
        await anyio.sleep(0.5)
        killed.append(await anyio.to_thread.run_sync(_terminate, url))


async def measure(url: str, jobs: int, storm: bool) -> tuple[list[float], int, int]:
    """Pickup latencies of `jobs` jobs, how many connections the storm killed, and how many
    enqueues failed."""
    enqueued: dict[str, float] = {}
    pickups: list[float] = []
    killed: list[int] = []
    failed = 0

    async def handler(job: Job) -> None:
        pickups.append(anyio.current_time() - enqueued[job.id])

    router = Router()
    router.register("noop", handler)
    engine = create_engine(url, pool_size=4)
    sink = PostgresSink(engine)
    try:
        async with PostgresQueue(engine) as queue, anyio.create_task_group() as tg:
            tg.start_soon(Worker(queue=queue, router=router, concurrency=4).run)
            if storm:
                tg.start_soon(_storm, url, jobs * 0.02, killed)
            for _ in range(jobs):
                job = new_job("noop")
                enqueued[job.id] = anyio.current_time()
                failed += await _enqueue(sink, job)
                await anyio.sleep(0.02)
            with anyio.fail_after(30):
                while len(pickups) < jobs:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    return pickups, sum(killed), failed


async def _enqueue(sink: PostgresSink, job: Job) -> int:
    """Enqueue until it succeeds; how many tries failed (the caller would have seen each)."""
    for failures in range(100):
        try:
            await sink.enqueue_many([Envelope(job, "default")])
        except Unavailable:
            continue
        return failures
    raise RuntimeError("the database did not take the job in 100 tries")


def _row(label: str, pickups: list[float], killed: int, failed: int) -> str:
    cuts = statistics.quantiles(pickups, n=100)
    p50, p99 = cuts[49] * 1000, cuts[98] * 1000
    top = max(pickups) * 1000
    cells = f"{len(pickups)} | {killed} | {failed} | {p50:.1f} | {p99:.1f} | {top:.1f}"
    return f"| {label} | {cells} |"


async def main(jobs: int) -> None:
    """Both runs on one database, then the table."""
    with database_url() as url:
        upgrade(url)
        calm = await measure(url, jobs, storm=False)
        stormy = await measure(url, jobs, storm=True)
    print("| run | jobs | connections killed | failed enqueues | pickup p50 ms | p99 ms | max ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(_row("no storm", *calm))
    print(_row("2 terminations/s of every connection", *stormy))
    print(f"\n1-minute load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="150 jobs instead of 1,500")
    arguments = parser.parse_args()
    anyio.run(main, 150 if arguments.quick else 1_500)
