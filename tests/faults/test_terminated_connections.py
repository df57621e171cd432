"""pg_terminate_backend on the system's connections: enqueues still succeed and the worker
picks jobs up at once."""

from __future__ import annotations

import statistics
from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink
from tests.faults.conftest import count_jobs, terminate_backends

pytestmark = pytest.mark.anyio


async def _warm_pool(engine: AsyncEngine, connections: int) -> None:
    async def hold() -> None:
        async with engine.connect() as conn:
            await conn.exec_driver_sql("SELECT pg_sleep(0.05)")

    async with anyio.create_task_group() as tg:
        for _ in range(connections):
            tg.start_soon(hold)


async def test_enqueue_many_on_a_killed_pooled_connection_succeeds_once(
    own_database: str, own_engine: AsyncEngine
) -> None:
    await _warm_pool(own_engine, 4)
    assert terminate_backends(own_database) == 4
    sink = PostgresSink(own_engine)
    envelopes = [Envelope(new_job("noop", n=str(n)), "default") for n in range(10)]
    assert await sink.enqueue_many(envelopes) == 10
    assert count_jobs(own_database) == 10


@pytest.mark.slow
async def test_pickup_stays_fast_under_a_terminate_storm(
    own_database: str, own_engine: AsyncEngine
) -> None:
    enqueued: dict[str, float] = {}
    pickups: list[float] = []

    async def handler(job: Job) -> None:
        pickups.append(anyio.current_time() - enqueued[job.id])

    router = Router()
    router.register("noop", handler)
    sink = PostgresSink(own_engine)
    async with PostgresQueue(own_engine, poll_interval=timedelta(seconds=1)) as queue:
        worker = Worker(queue=queue, router=router, concurrency=4)
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            tg.start_soon(_storm, own_database, 4.0)
            for n in range(150):
                job = new_job("noop", n=str(n))
                enqueued[job.id] = anyio.current_time()
                assert await sink.enqueue_many([Envelope(job, "default")]) == 1
                await anyio.sleep(0.02)
            with anyio.fail_after(10):
                while len(pickups) < 150:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
    p99 = statistics.quantiles(pickups, n=100)[98]
    # A killed connection costs the worker no pause: it receives again on a fresh one at once.
    assert p99 < 0.2, f"pickup p99 {p99 * 1000:.0f} ms"


async def _storm(url: str, seconds: float) -> None:
    """Two terminations a second of every connection to the database."""
    deadline = anyio.current_time() + seconds
    while anyio.current_time() < deadline:
        await anyio.sleep(0.5)
        await anyio.to_thread.run_sync(terminate_backends, url)
