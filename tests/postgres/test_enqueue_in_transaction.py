"""`enqueue_in_transaction`: a job written in the caller's own SQLAlchemy connection or session
or psycopg connection commits or rolls back with it, and wakes the queue only at the commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import PriorityUnsupported
from skincare_core.jobs.job import new_job
from skincare_core.jobs.priority import DEFAULT_PRIORITY, PRIORITIES
from skincare_postgres import PostgresQueue, TransactionConnection, enqueue_in_transaction
from skincare_postgres.engine import libpq_conninfo
from tests.postgres.pg_shop import Shop
from tests.postgres.test_notifier import LONG_POLL, listening, receive_after_commit

pytestmark = pytest.mark.anyio
Opener = Callable[[AsyncEngine], AbstractAsyncContextManager[TransactionConnection]]


@asynccontextmanager
async def sqlalchemy_connection(engine: AsyncEngine) -> AsyncIterator[TransactionConnection]:
    """A team's SQLAlchemy connection, its transaction not begun yet."""
    async with engine.connect() as conn:
        yield conn


@asynccontextmanager
async def sqlalchemy_session(engine: AsyncEngine) -> AsyncIterator[TransactionConnection]:
    """A team's ORM session."""
    async with AsyncSession(engine) as session:
        yield session


@asynccontextmanager
async def psycopg_connection(engine: AsyncEngine) -> AsyncIterator[TransactionConnection]:
    """A team's plain psycopg connection (not autocommit: its first statement begins)."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(engine.url)) as conn:
        yield conn


KINDS: dict[str, Opener] = {
    "sqlalchemy connection": sqlalchemy_connection,
    "sqlalchemy session": sqlalchemy_session,
    "psycopg connection": psycopg_connection,
}


async def jobs_stored(shop: Shop) -> int:
    return int(str(await shop.scalar("SELECT count(*) FROM jobs")))


async def stored_ids(engine: AsyncEngine, *, then_empty: bool = False) -> set[str]:
    """The ids of the jobs table's rows (deleted with `then_empty`)."""
    async with engine.begin() as conn:
        ids = set((await conn.execute(text("SELECT id FROM jobs"))).scalars())
        if then_empty:
            await conn.execute(text("DELETE FROM jobs"))
    return ids


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_a_committed_job_wakes_an_idle_worker_and_is_delivered(
    engine: AsyncEngine, kind: str
) -> None:
    job = new_job("sync_warehouse_stock", product_id="42")

    async def commit() -> None:
        async with KINDS[kind](engine) as conn:
            assert await enqueue_in_transaction(conn, Envelope(job)) is True
            await conn.commit()

    async with PostgresQueue(engine, poll_interval=LONG_POLL) as queue:
        got, waited = await receive_after_commit(queue, commit)
    assert [m.job for m in got] == [job]
    assert waited < 2.0


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_a_rolled_back_job_is_neither_stored_nor_announced(
    engine: AsyncEngine, shop: Shop, kind: str
) -> None:
    async with (
        listening(engine, "skincare_jobs.default") as received,
        KINDS[kind](engine) as conn,
    ):
        assert await enqueue_in_transaction(conn, Envelope(new_job("t"))) is True
        await conn.rollback()
    assert received == []
    assert await jobs_stored(shop) == 0


async def test_without_notify_the_worker_finds_the_job_within_its_poll(
    engine: AsyncEngine,
) -> None:
    async def commit() -> None:
        async with sqlalchemy_session(engine) as session:
            await enqueue_in_transaction(session, Envelope(new_job("t")), notify=False)
            await session.commit()

    async with PostgresQueue(engine, poll_interval=timedelta(seconds=1)) as queue:
        got, waited = await receive_after_commit(queue, commit)
    assert [m.job.type for m in got] == ["t"]
    assert waited < 1.5


async def test_a_unique_key_holds_within_the_transaction_and_against_live_jobs(
    engine: AsyncEngine, shop: Shop
) -> None:
    async with sqlalchemy_session(engine) as session:
        first = Envelope(new_job("t"), unique_key="stock-42")
        assert await enqueue_in_transaction(session, first) is True
        second = Envelope(new_job("t"), unique_key="stock-42")
        assert await enqueue_in_transaction(session, second) is False
        await session.commit()
    async with psycopg_connection(engine) as conn:
        third = Envelope(new_job("t"), unique_key="stock-42")
        assert await enqueue_in_transaction(conn, third) is False
        await conn.commit()
    assert await jobs_stored(shop) == 1


async def test_a_psycopg_connection_in_autocommit_needs_a_transaction_block(
    engine: AsyncEngine, shop: Shop
) -> None:
    conninfo = libpq_conninfo(engine.url)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        with pytest.raises(ValueError, match="needs an open transaction"):
            await enqueue_in_transaction(conn, Envelope(new_job("t")))
        async with conn.transaction():
            assert await enqueue_in_transaction(conn, Envelope(new_job("t"))) is True
    assert await jobs_stored(shop) == 1


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.booleans()), max_size=6))
async def test_the_stored_jobs_are_exactly_the_committed_ones(
    engine: AsyncEngine, transactions: list[tuple[str, bool]]
) -> None:
    committed: set[str] = set()
    for kind, commits in transactions:
        job = new_job("t")
        async with KINDS[kind](engine) as conn:
            await enqueue_in_transaction(conn, Envelope(job), notify=False)
            await (conn.commit() if commits else conn.rollback())
        if commits:
            committed.add(job.id)
    assert await stored_ids(engine, then_empty=True) == committed


@pytest.mark.parametrize("priority", PRIORITIES)
async def test_an_unordered_backend_takes_only_the_default_priority(
    engine: AsyncEngine, priority: int
) -> None:
    # On SQS (ordered=False) a priority would be kept in the row and never honoured: refused.
    job = new_job("sync_warehouse_stock", product_id="42")
    async with sqlalchemy_connection(engine) as conn:
        if priority == DEFAULT_PRIORITY:
            assert await enqueue_in_transaction(conn, Envelope(job), ordered=False) is True
        else:
            with pytest.raises(PriorityUnsupported, match="cannot order jobs by priority"):
                await enqueue_in_transaction(conn, Envelope(job, priority=priority), ordered=False)
        await conn.commit()
    assert await stored_ids(engine, then_empty=True) == (
        {job.id} if priority == DEFAULT_PRIORITY else set()
    )
