"""The SQS backend's job ledger: long delays wait in the outbox for the relay's window, a key is
held after the relay sent its job until the job ends, a job cancelled after it was sent is acked
unrun. moto's HTTP server and the embedded PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.envelope import Envelope, enqueue
from skincare_core.jobs.errors import PriorityUnsupported
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.jobs.router import Router
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresDatabase, PostgresJobLedger
from skincare_sqs import QueueUrls, sqs_backend
from skincare_sqs.client import Sender
from tests.sqs.conftest import ProvisionNamed

pytestmark = pytest.mark.anyio
ROUTES = QueueRoutes({"ledger.bulk": "bulk"})


def _opened(
    sqs_client: Any, urls: dict[str, QueueUrls], ledger: PostgresJobLedger
) -> AbstractAsyncContextManager[Backend]:
    return sqs_backend(sqs_client, urls=urls, ledger=ledger, queues=urls, wait_time_seconds=0)


@pytest.fixture
async def backend(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, ledger: PostgresJobLedger
) -> AsyncIterator[Backend]:
    async with _opened(sqs_client, fresh_named_queues(ROUTES.names), ledger) as opened:
        yield opened


async def _rows(engine: AsyncEngine) -> list[tuple[str, str]]:
    async with engine.connect() as conn:
        result = await conn.execute(text("SELECT id, status FROM jobs ORDER BY created_at"))
        return [(str(row[0]), str(row[1])) for row in result]


async def _relay_once(backend: Backend) -> int:
    assert backend.outbox is not None
    return await OutboxRelay(storage=backend.outbox, sink=backend.sink).relay_once()


async def test_a_delay_past_15_minutes_waits_in_the_outbox_and_a_shorter_one_is_sent(
    backend: Backend, engine: AsyncEngine
) -> None:
    later, sooner = new_job("ledger.later"), new_job("ledger.sooner")
    queue = backend.queue()
    assert await enqueue(queue, later, delay=timedelta(hours=1)) is True
    assert await enqueue(queue, sooner, delay=timedelta(minutes=14)) is True
    assert await _relay_once(backend) == 0
    assert await _rows(engine) == [(later.id, "ready"), (sooner.id, "sent")]
    assert (await backend.stats.stats()).scheduled == 1
    assert await queue.cancel(later.id) is True
    assert await _rows(engine) == [(sooner.id, "sent")]


async def test_the_relay_forwards_an_outbox_job_only_once_it_is_due_within_the_window(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    # A one-second window stands in for SQS's 15 minutes.
    ledger = PostgresJobLedger(engine, window=timedelta(seconds=1))
    urls = fresh_named_queues(ROUTES.names)
    job = new_job("ledger.bulk")
    due = datetime.now(UTC) + timedelta(seconds=3)
    async with sqs_backend(
        sqs_client, urls=urls, ledger=ledger, queues=["bulk"], wait_time_seconds=0
    ) as backend:
        async with PostgresDatabase(engine, routes=ROUTES)() as uow:
            assert await uow.outbox.add(job, not_before=due) is True
        assert await _relay_once(backend) == 0
        with anyio.fail_after(5):
            while not await _relay_once(backend):  # noqa: ASYNC110 - polling the outbox
                await anyio.sleep(0.1)
        relayed_at = datetime.now(UTC)
        assert relayed_at >= due - timedelta(seconds=1)
        with anyio.fail_after(5):
            while not (got := await backend.queue("bulk").receive(1)):  # noqa: ASYNC110
                await anyio.sleep(0.1)
    assert got[0].job == job
    assert datetime.now(UTC) >= due - timedelta(milliseconds=50)
    assert await _rows(engine) == [(job.id, "running")]


async def test_a_key_is_held_after_the_relay_sent_its_job_until_the_job_is_acked(
    backend: Backend, engine: AsyncEngine
) -> None:
    first, second = new_job("ledger.unique"), new_job("ledger.unique")
    async with PostgresDatabase(engine, routes=ROUTES)() as uow:
        assert await uow.outbox.add(first, unique_key="k") is True
    assert await _relay_once(backend) == 1
    queue = backend.queue()
    assert await enqueue(queue, second, unique_key="k") is False
    with anyio.fail_after(5):
        while not (got := await queue.receive(1)):
            pass
    assert await enqueue(queue, second, unique_key="k") is False
    await queue.ack_many([got[0]])
    assert await enqueue(queue, second, unique_key="k") is True
    assert await _rows(engine) == [(second.id, "sent")]


async def test_a_job_cancelled_after_it_was_sent_is_acked_by_the_worker_unrun(
    backend: Backend, engine: AsyncEngine
) -> None:
    cancelled, kept = new_job("ledger.run"), new_job("ledger.run")
    ran: list[Job] = []
    router = Router()
    router.register("ledger.run", lambda job: _record(ran, job))
    queue = backend.queue()
    await enqueue(queue, cancelled)
    assert await queue.cancel(cancelled.id) is True
    assert await _rows(engine) == [(cancelled.id, "cancelled")]
    await enqueue(queue, kept, delay=timedelta(seconds=1))
    async with anyio.create_task_group() as tg:
        tg.start_soon(Worker(queue=queue, router=router).run)
        with anyio.fail_after(10):
            while not ran:  # noqa: ASYNC110 - the worker appends, nothing to wait on
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    assert ran == [kept]
    assert await _rows(engine) == []
    assert await queue.receive(10) == []
    assert await backend.dead_letters.count() == 0


async def _record(ran: list[Job], job: Job) -> None:
    ran.append(job)


async def test_a_row_older_than_sqs_keeps_messages_is_swept_and_frees_its_key(
    backend: Backend, engine: AsyncEngine, ledger: PostgresJobLedger
) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO jobs (id, type, body, status, unique_key, available_at) VALUES"
                " ('lost', 't', '', 'sent', 'k', now() - interval '15 days'),"
                " ('recent', 't', '', 'sent', 'r', now() - interval '13 days')"
            )
        )
    assert await ledger.claim(10) == []
    assert await _rows(engine) == [("recent", "sent")]
    assert await enqueue(backend.queue(), new_job("ledger.unique"), unique_key="k") is True


async def test_an_outbox_job_with_a_priority_is_refused_on_sqs(
    backend: Backend, engine: AsyncEngine
) -> None:
    # SQS has no order among its messages: the unit of work of an SQS deployment (ordered=False)
    # refuses a priority before writing, and its transaction rolls back with nothing sent.
    urgent, plain = new_job("ledger.unique"), new_job("ledger.unique")

    async def checkout() -> None:
        async with PostgresDatabase(engine, routes=ROUTES, ordered=False)() as uow:
            assert await uow.outbox.add(plain) is True
            await uow.outbox.add(urgent, priority=1)

    with pytest.raises(PriorityUnsupported, match="cannot order jobs by priority"):
        await checkout()
    assert await _rows(engine) == []
    assert await _relay_once(backend) == 0
    async with PostgresDatabase(engine, routes=ROUTES, ordered=False)() as uow:
        assert await uow.outbox.add(plain) is True
    assert await _relay_once(backend) == 1


async def test_a_stray_copy_of_an_unsent_job_is_acked_unrun_and_the_job_waits_on(
    sqs_client: Any,
    fresh_named_queues: ProvisionNamed,
    ledger: PostgresJobLedger,
    engine: AsyncEngine,
) -> None:
    # The ledger holds the job in the outbox (due in an hour); a copy of it reaches SQS anyway
    # (sent around the ledger, as a send its sender thought failed would have): it must not run.
    urls, job = fresh_named_queues(ROUTES.names), new_job("ledger.run")
    async with _opened(sqs_client, urls, ledger) as backend:
        queue = backend.queue()
        await enqueue(queue, job, delay=timedelta(hours=1))
        sender = Sender(sqs_client, urls[DEFAULT_QUEUE].queue_url)
        assert await sender.send_many([Envelope(job)]) == 1
        assert await queue.receive(10) == []
    assert await _rows(engine) == [(job.id, "ready")]
    attributes = sqs_client.get_queue_attributes(
        QueueUrl=urls[DEFAULT_QUEUE].queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert set(attributes.values()) == {"0"}


async def test_the_ledger_reports_copies_of_dead_and_unsent_jobs_as_unrun(
    ledger: PostgresJobLedger, engine: AsyncEngine
) -> None:
    dead, unsent, sent = (new_job("ledger.run", n=str(n)) for n in range(3))
    for job in (dead, unsent):
        assert await ledger.add(Envelope(job), due=None, send_now=False) == ""
    receipt = await ledger.add(Envelope(sent), due=None, send_now=True)
    assert receipt
    await ledger.mark_sent([receipt])
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE jobs SET status = 'dead' WHERE id = :id"), {"id": dead.id})
    assert await ledger.start([dead.id, unsent.id, sent.id]) == {dead.id, unsent.id}
    assert sorted(await _rows(engine)) == sorted(
        [(dead.id, "dead"), (unsent.id, "ready"), (sent.id, "running")]
    )
