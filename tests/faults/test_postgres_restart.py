"""PostgreSQL restarted (`pg_ctl restart`, fast and immediate) under load, on a server of the
test's own. Invariants: every job whose enqueue returned is run, none is lost; a producer that
retries a failed enqueue with the same ids (as an API client retries with its Idempotency-Key)
stores each job once; the worker is back within 5 s of the server's return."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink, create_engine
from tests.faults.conftest import count_jobs
from tests.restartable_postgres import RestartablePostgres, StopMode, restartable_postgres

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

JOBS = 60


async def _enqueue_until_stored(sink: PostgresSink, job: Job) -> None:
    with anyio.fail_after(15):
        while True:
            try:
                await sink.enqueue_many([Envelope(job, "default")])
                return
            except Unavailable:
                await anyio.sleep(0.05)


async def _load_across_a_restart(postgres: RestartablePostgres, mode: StopMode) -> Counter[str]:
    runs: Counter[str] = Counter()

    async def handler(job: Job) -> None:
        runs[job.id] += 1

    router = Router()
    router.register("noop", handler)
    engine = create_engine(postgres.url, pool_size=2)
    sink = PostgresSink(engine)
    jobs = [new_job("noop", n=str(n)) for n in range(JOBS)]
    try:
        async with PostgresQueue(engine) as queue, anyio.create_task_group() as tg:
            tg.start_soon(Worker(queue=queue, router=router, concurrency=4).run)
            for n, job in enumerate(jobs):
                if n == JOBS // 2:
                    await anyio.to_thread.run_sync(postgres.restart, mode)
                await _enqueue_until_stored(sink, job)
                await anyio.sleep(0.01)
            with anyio.fail_after(5):
                while len(runs) < JOBS:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    assert set(runs) == {job.id for job in jobs}
    return runs


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_a_restart_loses_no_job_and_stores_none_twice(tmp_path: Path, mode: StopMode) -> None:
    with restartable_postgres(tmp_path / "pgdata") as postgres:
        runs = await _load_across_a_restart(postgres, mode)
        assert count_jobs(postgres.url) <= JOBS
    # A job running when the server went away may run again (at least once); no more than that.
    assert max(runs.values()) <= 2
