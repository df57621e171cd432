"""The worker and a producer reach PostgreSQL (a database of the test's own) through a proxy
that cuts or slows the traffic. Invariants: while cut, an enqueue fails fast as `Unavailable`
(no hang, no other error); every job whose enqueue returned runs, once; after the cut ends, the
backlog runs within 10 s."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink, create_engine
from tests.faults.conftest import through, upstream_of
from tests.faults.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _counting_router(runs: Counter[str]) -> Router:
    async def handler(job: Job) -> None:
        runs[job.id] += 1

    router = Router()
    router.register("noop", handler)
    return router


async def _wait_for(runs: Counter[str], jobs: list[Job], seconds: float) -> None:
    with anyio.fail_after(seconds):
        while not {job.id for job in jobs} <= set(runs):  # noqa: ASYNC110
            await anyio.sleep(0.02)


async def test_a_cut_fails_enqueues_fast_and_the_backlog_runs_after(own_database: str) -> None:
    runs: Counter[str] = Counter()
    with TcpProxy(upstream_of(own_database)) as proxy:
        engine = create_engine(through(own_database, proxy.port), pool_size=2)
        sink = PostgresSink(engine)
        before = [new_job("noop", n=str(n)) for n in range(10)]
        after = [new_job("noop", n=str(n)) for n in range(10, 20)]
        try:
            async with PostgresQueue(engine) as queue, anyio.create_task_group() as tg:
                tg.start_soon(Worker(queue=queue, router=_counting_router(runs), concurrency=4).run)
                await sink.enqueue_many([Envelope(job, "default") for job in before])
                await _wait_for(runs, before, 5)
                proxy.cut()
                with anyio.fail_after(3), pytest.raises(Unavailable):
                    await sink.enqueue_many([Envelope(new_job("noop"), "default")])
                await anyio.sleep(1)
                proxy.resume()
                with anyio.fail_after(5):
                    await sink.enqueue_many([Envelope(job, "default") for job in after])
                # The LISTEN connection is lost with the link: the queue's poll finds these jobs.
                await _wait_for(runs, after, 10)
                tg.cancel_scope.cancel()
        finally:
            await engine.dispose()
    assert max(runs.values()) == 1


async def test_a_slow_link_still_runs_every_job(own_database: str) -> None:
    runs: Counter[str] = Counter()
    with TcpProxy(upstream_of(own_database)) as proxy:
        engine = create_engine(through(own_database, proxy.port), pool_size=2)
        sink = PostgresSink(engine)
        jobs = [new_job("noop", n=str(n)) for n in range(10)]
        try:
            async with PostgresQueue(engine) as queue, anyio.create_task_group() as tg:
                tg.start_soon(Worker(queue=queue, router=_counting_router(runs), concurrency=4).run)
                proxy.slow(0.02)
                for job in jobs:
                    await sink.enqueue_many([Envelope(job, "default")])
                await _wait_for(runs, jobs, 10)
                tg.cancel_scope.cancel()
        finally:
            await engine.dispose()
    assert max(runs.values()) == 1
