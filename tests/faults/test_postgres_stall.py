"""A stalled network between the worker and PostgreSQL (connections accepted, nothing answered):
the worker's statements give up on the client side and it recovers once the network answers.

Invariants: no job lost, none run twice, the backlog runs within the deadline (statement
timeout + connect timeout) plus a few seconds of the network's return.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink, create_engine
from tests.faults.conftest import through, upstream_of
from tests.faults.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_stalled_network_delays_the_worker_but_loses_nothing(
    own_database: str, own_engine: AsyncEngine
) -> None:
    runs: Counter[str] = Counter()

    async def handler(job: Job) -> None:
        runs[job.id] += 1

    router = Router()
    router.register("noop", handler)
    sink = PostgresSink(own_engine)
    before = [new_job("noop") for _ in range(5)]
    during = [new_job("noop") for _ in range(5)]
    with TcpProxy(upstream_of(own_database)) as proxy:
        # The queue's own connections take the engine's timeouts.
        engine = create_engine(
            through(own_database, proxy.port),
            pool_size=2,
            statement_timeout=timedelta(seconds=1),
            connect_timeout=timedelta(seconds=1),
        )
        queue = PostgresQueue(engine, poll_interval=timedelta(seconds=0.5))
        try:
            async with queue, anyio.create_task_group() as tg:
                tg.start_soon(Worker(queue=queue, router=router, concurrency=4).run)
                await sink.enqueue_many([Envelope(job, "default") for job in before])
                await _all_ran(runs, before, 5)
                proxy.stall()
                await sink.enqueue_many([Envelope(job, "default") for job in during])
                await anyio.sleep(1.5)
                proxy.resume()
                # The claim's client-side deadline ends the stalled wait: the worker claims again.
                await _all_ran(runs, during, 10)
                tg.cancel_scope.cancel()
        finally:
            await engine.dispose()
    assert set(runs) == {job.id for job in before + during}
    assert max(runs.values()) == 1


async def _all_ran(runs: Counter[str], jobs: list[Job], seconds: float) -> None:
    with anyio.fail_after(seconds):
        while any(job.id not in runs for job in jobs):  # noqa: ASYNC110
            await anyio.sleep(0.02)
