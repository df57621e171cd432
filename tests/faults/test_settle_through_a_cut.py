"""Jobs that finish while the link to PostgreSQL is cut are settled once it is back, not when
their lease runs out: the worker and its queue reach the database through a proxy; the test
reads the jobs table on a connection of its own."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import anyio
import anyio.to_thread
import psycopg
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresQueue, PostgresSink, create_engine
from skincare_postgres.engine import libpq_conninfo
from tests.faults.conftest import through, upstream_of
from tests.faults.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
LEASE = timedelta(seconds=30)
DONE, DOOMED = 8, 2


class Held:
    """Handlers that count their runs and finish when `gate` opens; `doomed` ones then fail."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.gate = anyio.Event()

    async def done(self, job: Job) -> None:
        self.runs[job.id] += 1
        await self.gate.wait()

    async def doomed(self, job: Job) -> None:
        await self.done(job)
        raise PermanentJobError("refused by the provider")

    def router(self) -> Router:
        router = Router()
        router.register("done", self.done)
        router.register("doomed", self.doomed)
        return router


def _unsettled(url: str) -> tuple[int, int]:
    """Jobs neither acked (deleted) nor dead, and dead jobs, read past the proxy."""
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE status <> 'dead'),"
            " count(*) FILTER (WHERE status = 'dead') FROM jobs"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


async def _seconds_until_settled(url: str, within: float) -> float:
    started = anyio.current_time()
    with anyio.fail_after(within):
        while await anyio.to_thread.run_sync(_unsettled, url) != (0, DOOMED):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    return anyio.current_time() - started


async def test_jobs_finished_during_a_cut_settle_within_3_s_of_its_end(own_database: str) -> None:
    held = Held()
    jobs = [new_job("done") for _ in range(DONE)] + [new_job("doomed") for _ in range(DOOMED)]
    with TcpProxy(upstream_of(own_database)) as proxy:
        engine = create_engine(through(own_database, proxy.port), pool_size=2)
        try:
            async with (
                PostgresQueue(engine, visibility_timeout=LEASE) as queue,
                anyio.create_task_group() as tg,
            ):
                worker = Worker(
                    queue=queue, router=held.router(), concurrency=12, visibility_timeout=LEASE
                )
                tg.start_soon(worker.run)
                await PostgresSink(engine).enqueue_many([Envelope(j, "default") for j in jobs])
                with anyio.fail_after(10):
                    while len(held.runs) < len(jobs):  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                proxy.cut()
                held.gate.set()
                await anyio.sleep(1.5)
                proxy.resume()
                # The completer re-sends the settlements once the link is back: no lease runs out.
                elapsed = await _seconds_until_settled(own_database, within=3.0)
                tg.cancel_scope.cancel()
        finally:
            await engine.dispose()
    # The completer's retries back off to a bounded interval, so it notices the return soon.
    assert elapsed < 3.0, f"settled {elapsed:.2f} s after the link came back"
    assert set(held.runs.values()) == {1}
