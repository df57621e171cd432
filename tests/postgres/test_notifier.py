"""Waking workers after the commit (PostgresNotifier): once per channel per tick, never for a
rolled-back job, and a lost notification costs an idle worker at most its poll interval."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio
import psycopg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Message, new_job
from skincare_postgres import (
    PostgresDatabase,
    PostgresNotifier,
    PostgresQueue,
    create_engine,
    postgres_backend,
)
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.notifier import APPLICATION_NAME
from skincare_postgres.jobs.sink import PostgresSink
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio
LONG_POLL = timedelta(seconds=10)


@asynccontextmanager
async def listening(engine: AsyncEngine, *channels: str) -> AsyncIterator[list[str]]:
    """The channels' notifications, in order, as a LISTEN connection receives them."""
    received: list[str] = []
    conninfo = libpq_conninfo(engine.url)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        for channel in channels:
            await conn.execute(f'LISTEN "{channel}"')
        yield received
        received.extend([n.channel async for n in conn.notifies(timeout=0.3)])


async def receive_after_commit(
    queue: PostgresQueue, commit: Callable[[], Awaitable[None]]
) -> tuple[list[Message], float]:
    """What an idle receive returns when `commit` runs while it waits, and how long after."""
    got: list[Message] = []
    async with anyio.create_task_group() as tg:

        async def receive() -> None:
            got.extend(await queue.receive())

        tg.start_soon(receive)
        # The receive is idle by now, waiting on its listener. Had it not LISTENed yet, its
        # first claim (which follows the LISTEN) would find the job anyway.
        await anyio.sleep(0.3)
        start = anyio.current_time()
        await commit()
    return got, anyio.current_time() - start


async def test_a_committed_outbox_job_wakes_an_idle_worker_long_before_its_poll(
    engine: AsyncEngine, db: PostgresDatabase
) -> None:
    async def commit() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("t"))

    async with PostgresQueue(engine, poll_interval=LONG_POLL) as queue:
        got, waited = await receive_after_commit(queue, commit)
    assert [m.job.type for m in got] == ["t"]
    assert waited < 2.0


async def test_a_delayed_outbox_job_wakes_the_worker_to_wait_for_its_due_time(
    engine: AsyncEngine, db: PostgresDatabase
) -> None:
    async def commit() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("later"), delay=timedelta(seconds=0.5))

    async with PostgresQueue(engine, poll_interval=LONG_POLL) as queue:
        got, waited = await receive_after_commit(queue, commit)
    assert [m.job.type for m in got] == ["later"]
    assert 0.4 < waited < 3.0


async def test_commits_within_a_tick_share_one_notify_and_a_rollback_sends_none(
    engine: AsyncEngine,
) -> None:
    db = PostgresDatabase(engine, notifier=PostgresNotifier(engine, tick=timedelta(seconds=1)))

    async def roll_back() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("rolled back"))
            raise RuntimeError("rolled back")

    async with listening(engine, "skincare_jobs.default") as received:
        with pytest.raises(RuntimeError):
            await roll_back()
        for n in range(10):
            async with db() as uow:
                await uow.outbox.add(new_job("t", n=str(n)))
        await db.notifier.idle()
    # The first commit's NOTIFY went at once; the nine during its tick shared the next one.
    assert received == ["skincare_jobs.default", "skincare_jobs.default"]


async def test_enqueue_outside_a_transaction_wakes_each_queue_once(engine: AsyncEngine) -> None:
    notifier = PostgresNotifier(engine)
    sink = PostgresSink(engine, notifier=notifier)
    channels = ("skincare_jobs.default", "skincare_jobs.bulk", "skincare_jobs.idle")
    async with listening(engine, *channels) as received:
        envelopes = [Envelope(new_job("t"), queue=q) for q in ("bulk", "default", "bulk")]
        assert await sink.enqueue_many(envelopes) == 3
        await notifier.idle()
    assert sorted(received) == ["skincare_jobs.bulk", "skincare_jobs.default"]


async def test_a_backend_and_a_database_given_one_notifier_share_its_one_connection(
    shop_url: str, shop: Shop
) -> None:
    # As the worker process composes them: its backend's enqueues and its handlers' units of
    # work wake the queues through one notifier, so one connection.
    query = f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}'"
    before = int(str(await shop.scalar(query)))
    own = create_engine(shop_url)
    notifier = PostgresNotifier(own)
    db = PostgresDatabase(own, notifier=notifier)
    async with (
        postgres_backend(own, notifier=notifier) as backend,
        listening(own, "skincare_jobs.default") as received,
    ):
        await backend.sink.enqueue_many([Envelope(new_job("by the backend"), queue="default")])
        await notifier.idle()
        async with db() as uow:
            await uow.outbox.add(new_job("by a handler"))
        await notifier.idle()
        opened = int(str(await shop.scalar(query))) - before
    await own.dispose()
    assert received == ["skincare_jobs.default", "skincare_jobs.default"]
    assert opened == 1


async def test_a_killed_notifier_connection_is_replaced_and_the_next_job_still_wakes(
    engine: AsyncEngine, db: PostgresDatabase, shop: Shop
) -> None:
    async def commit(name: str) -> None:
        async with db() as uow:
            await uow.outbox.add(new_job(name))

    async with PostgresQueue(engine, poll_interval=LONG_POLL) as queue:
        await receive_after_commit(queue, lambda: commit("first"))
        killed = await shop.scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            f" WHERE application_name = '{APPLICATION_NAME}'"
        )
        got, waited = await receive_after_commit(queue, lambda: commit("second"))
    assert int(str(killed)) >= 1
    assert [m.job.type for m in got] == ["second"]
    assert waited < 2.0


async def test_a_lost_notification_costs_at_most_the_poll_interval_never_the_job(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    # A notifier that can never reach its server: every NOTIFY it sends is lost.
    nowhere = create_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")
    db = PostgresDatabase(engine, notifier=PostgresNotifier(nowhere))

    async def commit() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("t"))

    with caplog.at_level(logging.WARNING, logger="skincare_postgres.jobs.notifier"):
        async with PostgresQueue(engine, poll_interval=timedelta(seconds=1)) as queue:
            got, waited = await receive_after_commit(queue, commit)
        await db.notifier.idle()
    await nowhere.dispose()
    # The receive's poll (1 s, begun 0.3 s before the commit) found the job.
    assert [m.job.type for m in got] == ["t"]
    assert waited < 1.5
    assert [r.message for r in caplog.records] == ["jobs.notify_failed"]


async def test_disposing_of_the_engine_closes_the_notifier_connection(
    shop_url: str, shop: Shop
) -> None:
    query = f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}'"
    before = await shop.scalar(query)
    own = create_engine(shop_url)
    notifier = PostgresNotifier(own)
    notifier.wake(["skincare_jobs.nobody"])
    await notifier.idle()
    assert await shop.scalar(query) == int(str(before)) + 1
    await own.dispose()
    with anyio.fail_after(5):
        while await shop.scalar(query) != before:  # noqa: ASYNC110
            await anyio.sleep(0.05)
