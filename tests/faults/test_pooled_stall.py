"""A stalled network (connections accepted, nothing answered) under the engine's pooled path:
the unit of work (a business transaction) and the one-statement Autocommit path.

Invariants: a statement, a commit or a connect sent into the stall (through a pooled connection
opened before it, or a new one) gives up on the client side
within the engine's deadline (statement timeout + connect timeout) as `DatabaseUnavailable`
(the API's 503), never hangs; nothing half-done is stored; once the network answers again, a
unit of work and an enqueue succeed within 1 s.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import new_job
from skincare_postgres import PostgresDatabase, PostgresSink, create_engine
from skincare_postgres.errors import DatabaseUnavailable
from tests.faults.conftest import count_jobs, through, upstream_of
from tests.faults.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TIMEOUT = timedelta(seconds=1)
DEADLINE = 2 * TIMEOUT.total_seconds()
"""The engine's client-side deadline: statement timeout + connect timeout."""
MARGIN = 1.0
HANG = DEADLINE + MARGIN + 2


def _quick_engine(url: str) -> AsyncEngine:
    return create_engine(
        url, connect_timeout=TIMEOUT, statement_timeout=TIMEOUT, pool_size=2, max_overflow=0
    )


def _envelope() -> Envelope:
    return Envelope(new_job("noop"), "default")


async def _enqueue_in_uow(db: PostgresDatabase) -> None:
    async with db() as uow:
        await uow.products.list()
        await uow.outbox.add(new_job("noop"))


async def _seconds_to_fail(action: Callable[[], Awaitable[object]]) -> float:
    """Seconds `action()` took to raise DatabaseUnavailable; HANG if it was still waiting then."""
    started = time.monotonic()
    with anyio.move_on_after(HANG):
        with pytest.raises(DatabaseUnavailable):
            await action()
        return time.monotonic() - started
    return HANG


async def _commit_into_the_stall(db: PostgresDatabase, proxy: TcpProxy) -> None:
    async with db() as uow:
        await uow.outbox.add(new_job("noop"))
        proxy.stall()


async def test_a_stall_fails_pooled_work_within_the_deadline_and_it_recovers(
    own_database: str,
) -> None:
    with TcpProxy(upstream_of(own_database)) as proxy:
        engine = _quick_engine(through(own_database, proxy.port))
        db = PostgresDatabase(engine)
        sink = PostgresSink(engine)
        try:
            async with anyio.create_task_group() as tg:  # two pooled connections, before it
                tg.start_soon(_enqueue_in_uow, db)
                tg.start_soon(_enqueue_in_uow, db)
            # The client-side deadline ends a commit or a statement on a stalled pooled connection,
            # and the connect timeout a new connection's attempt.
            failed = [
                await _seconds_to_fail(lambda: _commit_into_the_stall(db, proxy)),
                await _seconds_to_fail(lambda: _enqueue_in_uow(db)),
                await _seconds_to_fail(lambda: sink.enqueue_many([_envelope()])),
                await _seconds_to_fail(db.ping),
            ]
            proxy.resume()
            with anyio.fail_after(1):
                await _enqueue_in_uow(db)
                await sink.enqueue_many([_envelope()])
        finally:
            await engine.dispose()
    print(f"pooled stall: failed after {[round(s, 2) for s in failed]} s")
    assert all(seconds < DEADLINE + MARGIN for seconds in failed), failed
    assert count_jobs(own_database) == 4
