"""What counting finished jobs (job_outcomes) costs the Postgres queue's drain, side by side.

Run: `uv run python -m bench.outcomes_cost [--quick] [--reps N] [--workers W]`. Each rep drains
the same no-op jobs twice, counter off then on (the order alternates per rep), through `W`
Workers of one named queue at once (each its own PostgresQueue, as worker processes are, so
their acks upsert the same minute's row concurrently), on an embedded server unless
SKINCARE_BENCH_DATABASE_URL is set. A drain is timed until every job is acked (the jobs table is
empty), not only run. "Off" acks with the DELETE alone, the statement before job_outcomes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.embedded import database_url
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, create_engine, jobs_sql, upgrade

# The ACK statement as it was before the outcomes counter (migration 0006).
_PLAIN_ACK = """
DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT jsonb_array_elements(%(acks)s::jsonb) ->> 0))
    AND receipt = ANY(ARRAY(SELECT (jsonb_array_elements(%(acks)s::jsonb) ->> 1)::uuid))
"""


@contextmanager
def counter(on: bool) -> Iterator[None]:
    """Ack with the counting statement (on) or the plain DELETE (off) meanwhile."""
    counting = jobs_sql.ACK
    jobs_sql.ACK = counting if on else _PLAIN_ACK
    try:
        yield
    finally:
        jobs_sql.ACK = counting


async def _scalar(engine: AsyncEngine, sql: str) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text(sql))).scalar_one())


async def _fill(engine: AsyncEngine, count: int) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("TRUNCATE jobs, job_outcomes"))
    async with PostgresQueue(engine) as queue:
        jobs = [Envelope(new_job("noop", n=str(n))) for n in range(count)]
        for i in range(0, count, 1000):
            await queue.enqueue_many(jobs[i : i + 1000])


async def _acked(engine: AsyncEngine) -> None:
    # Polled only once every job has run: the last acks are still in flight, nothing else is.
    for _ in range(12_000):
        if not await _scalar(engine, "SELECT count(*) FROM jobs"):
            return
        await anyio.sleep(0.005)
    raise AssertionError("jobs left unacked after a minute")


async def drain(engine: AsyncEngine, count: int, workers: int) -> float:
    """Seconds until `workers` Workers (16 slots, batches of 50 each) have acked every job."""
    seen, ran = 0, anyio.Event()

    async def noop(job: Job) -> None:
        nonlocal seen
        seen += 1
        if seen == count:
            ran.set()

    router = Router()
    router.register("noop", noop)
    queues = [PostgresQueue(engine) for _ in range(workers)]
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for queue in queues:
            worker = Worker(queue=queue, router=router, concurrency=16, receive_batch=50)
            tg.start_soon(worker.run)
        await ran.wait()
        await _acked(engine)
        elapsed = time.perf_counter() - start
        tg.cancel_scope.cancel()
    for queue in queues:
        await queue.aclose()
    return elapsed


async def side_by_side(engine: AsyncEngine, count: int, reps: int, workers: int) -> list[float]:
    """Median jobs/s off, median jobs/s on, over `reps` alternating pairs; checks the counts."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    for rep in range(reps):
        for on in (rep % 2 == 1, rep % 2 == 0):
            await _fill(engine, count)
            with counter(on):
                rates[on].append(count / await drain(engine, count, workers))
            counted = await _scalar(engine, "SELECT coalesce(sum(done), 0) FROM job_outcomes")
            assert counted == (count if on else 0), (on, counted)
    return [statistics.median(rates[False]), statistics.median(rates[True])]


async def main(quick: bool, reps: int, workers: int) -> None:
    """The drains side by side, then the table."""
    count = 5_000 if quick else 20_000
    with database_url() as url:
        upgrade(url)
        engine = create_engine(url)
        try:
            off, on = await side_by_side(engine, count, reps, workers)
        finally:
            await engine.dispose()
    print(f"drain {count:,} no-op jobs, {workers} worker(s) x 16 slots, batch 50; median of {reps}")
    print(f"{'counter off':>14} {'counter on':>14} {'on / off':>9}")
    print(f"{off:>10,.0f} j/s {on:>10,.0f} j/s {on / off:>8.1%}")
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="5,000 jobs instead of 20,000")
    parser.add_argument("--reps", type=int, default=5, help="pairs of drains (default 5)")
    parser.add_argument("--workers", type=int, default=2, help="Workers at once (default 2)")
    args = parser.parse_args()
    anyio.run(main, args.quick, args.reps, args.workers)
