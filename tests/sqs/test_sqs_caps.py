"""Concurrency caps on SQS, counted in the job ledger's database: core's caps contract
unchanged (`twin` is a second backend with a ledger of its own on the same database, as a
second worker process would open it), and what the ledger and SQS hold meanwhile."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from typing import Any

import anyio
import psycopg
import pytest
from psycopg.rows import TupleRow
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.envelope import Envelope, enqueue
from skincare_core.jobs.job import new_job
from skincare_core.testing.jobs.caps_contract import (
    OTHER,
    QUEUE,
    Capped,
    CappedSubject,
    CapsContract,
    receive_all,
)
from skincare_postgres import PostgresJobLedger
from skincare_postgres.driver import in_transaction
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.capped_claims import LOCK
from skincare_postgres.jobs.ledger_caps import CappedStart, start_capped
from skincare_sqs import MAX_DELAY, ensure_queues, sqs_backend
from skincare_sqs.client import Sender
from tests.sqs.conftest import ProvisionNamed

# A lease outlasts a few receives (the contract receives until one comes back empty).
_LEASE = timedelta(seconds=5)
_WAIT = 1
_TICK = timedelta(seconds=1)
_SECONDS = int(_LEASE.total_seconds())


def _opened(
    client: Any, urls: Any, engine: AsyncEngine, caps: ConcurrencyCaps, *queues: str
) -> AbstractAsyncContextManager[Backend]:
    ledger = PostgresJobLedger(engine, window=MAX_DELAY)
    return sqs_backend(
        client,
        urls=urls,
        ledger=ledger,
        queues=queues,
        wait_time_seconds=_WAIT,
        caps=caps,
        cap_lease=_LEASE,
    )


@pytest.mark.slow
class TestSqsCaps(CapsContract):
    @pytest.fixture
    def capped(
        self, sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
    ) -> Capped:
        @asynccontextmanager
        async def subject(caps: ConcurrencyCaps) -> AsyncIterator[CappedSubject]:
            urls = fresh_named_queues([QUEUE, OTHER], visibility_timeout=_SECONDS)
            async with (
                _opened(sqs_client, urls, engine, caps, QUEUE, OTHER) as backend,
                _opened(sqs_client, urls, engine, caps, QUEUE) as twin,
            ):
                yield CappedSubject(
                    backend.queue(QUEUE), backend.queue(OTHER), twin.queue(QUEUE), _LEASE, _TICK
                )

        return subject


pytestmark = pytest.mark.anyio


async def _slots(engine: AsyncEngine) -> list[tuple[str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT cap, job_id FROM job_cap_leases ORDER BY job_id"))
        return [(row.cap, row.job_id) for row in rows]


async def _states(engine: AsyncEngine) -> dict[str, str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT id, status FROM jobs"))
        return {row.id: row.status for row in rows}


def _dead(client: Any, urls: Any) -> str:
    attributes = client.get_queue_attributes(
        QueueUrl=urls[QUEUE].dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    return str(attributes["Attributes"]["ApproximateNumberOfMessages"])


async def test_a_job_held_back_past_the_redrive_limit_spends_no_attempt(
    sqs_client: Any, engine: AsyncEngine
) -> None:
    # Held back three times on a queue whose redrive policy moves a message at its 2nd receive.
    prefix = f"caps-{uuid.uuid4().hex[:12]}"
    urls = ensure_queues(
        sqs_client, prefix, [QUEUE], max_receive_count=2, visibility_timeout=_SECONDS
    )
    caps = ConcurrencyCaps(types={"mail": 1})
    async with _opened(sqs_client, urls, engine, caps, QUEUE) as backend:
        queue = backend.queue(QUEUE)
        running, waiting = new_job("mail", n="1"), new_job("mail", n="2")
        await enqueue(queue, running)
        [first] = await queue.receive(10)
        await enqueue(queue, waiting)
        for _ in range(3):
            assert await queue.receive(10) == []
        assert await _states(engine) == {first.job.id: "running", waiting.id: "sent"}
        await queue.ack_many([first])
        [second] = await receive_all(queue)
        assert (second.job.id, second.attempts) == (waiting.id, 1)
        assert _dead(sqs_client, urls) == "0"
        assert await _slots(engine) == [("type:mail", waiting.id)]


async def test_a_heartbeat_keeps_the_slot_past_its_first_lease(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    urls = fresh_named_queues([QUEUE], visibility_timeout=_SECONDS)
    caps = ConcurrencyCaps(types={"mail": 1})
    async with (
        _opened(sqs_client, urls, engine, caps, QUEUE) as backend,
        _opened(sqs_client, urls, engine, caps, QUEUE) as twin,
    ):
        for n in range(2):
            await enqueue(backend.queue(QUEUE), new_job("mail", n=str(n)))
        [first] = await receive_all(backend.queue(QUEUE))
        await backend.queue(QUEUE).extend_many([first], timedelta(seconds=30))
        # Past the first lease: the slot is still taken.
        await anyio.sleep(_LEASE.total_seconds())
        assert await receive_all(twin.queue(QUEUE)) == []
        assert await receive_all(twin.queue(QUEUE)) == []


async def test_a_queue_no_cap_touches_takes_no_slot(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    urls = fresh_named_queues([QUEUE, OTHER], visibility_timeout=_SECONDS)
    caps = ConcurrencyCaps(queues={QUEUE: 1})
    async with _opened(sqs_client, urls, engine, caps, QUEUE, OTHER) as backend:
        for n in range(3):
            await enqueue(backend.queue(OTHER), new_job("free", n=str(n)))
        assert len(await receive_all(backend.queue(OTHER))) == 3
        assert await _slots(engine) == []
        assert set((await _states(engine)).values()) == {"running"}


async def test_a_batch_of_uncapped_jobs_starts_without_waiting_for_the_caps(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    urls = fresh_named_queues([QUEUE], visibility_timeout=_SECONDS)
    caps = ConcurrencyCaps(types={"mail": 1})
    async with (
        _opened(sqs_client, urls, engine, caps, QUEUE) as backend,
        await psycopg.AsyncConnection.connect(libpq_conninfo(engine.url)) as other,
    ):
        for n in range(3):
            await enqueue(backend.queue(QUEUE), new_job("report", n=str(n)))
        # Another process's capped start holds the mail cap's lock until it commits.
        await other.execute(LOCK, {"caps": ["type:mail"]})
        with anyio.fail_after(10):
            assert len(await receive_all(backend.queue(QUEUE))) == 3
        await other.rollback()
        assert await _slots(engine) == []
        assert set((await _states(engine)).values()) == {"running"}


async def test_a_second_delivery_of_a_running_job_waits_and_its_slot_stays(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    # SQS may deliver a message twice: the copy must not start the job again beside itself.
    urls = fresh_named_queues([QUEUE], visibility_timeout=_SECONDS)
    caps = ConcurrencyCaps(types={"mail": 2})
    ledger = PostgresJobLedger(engine, window=MAX_DELAY)
    async with _opened(sqs_client, urls, engine, caps, QUEUE) as backend:
        job = new_job("mail")
        await enqueue(backend.queue(QUEUE), job)
        assert len(await receive_all(backend.queue(QUEUE))) == 1
        slots = await _slots(engine)
        again = await ledger.start_capped([(job.id, "mail")], queue=QUEUE, caps=caps, lease=_LEASE)
        assert (again.held_back, again.unrun) == (frozenset({job.id}), frozenset())
        assert await _slots(engine) == slots == [("type:mail", job.id)]
        assert await _states(engine) == {job.id: "running"}


async def test_a_job_without_a_ledger_row_counts_under_its_cap(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    # A message sent around the ledger (or a late copy of a job that ended) still takes a slot.
    urls = fresh_named_queues([QUEUE], visibility_timeout=_SECONDS)
    caps = ConcurrencyCaps(types={"mail": 1})
    async with _opened(sqs_client, urls, engine, caps, QUEUE) as backend:
        first, second = new_job("mail", n="1"), new_job("mail", n="2")
        sender = Sender(sqs_client, urls[QUEUE].queue_url)
        assert await sender.send_many([Envelope(first), Envelope(second)]) == 2
        [running] = await receive_all(backend.queue(QUEUE))
        assert await _states(engine) == {running.job.id: "running"}
        await backend.queue(QUEUE).ack_many([running])
        [after] = await receive_all(backend.queue(QUEUE))
        assert {running.job.id, after.job.id} == {first.id, second.id}
        assert await _slots(engine) == [("type:mail", after.job.id)]


async def _waiting_on_a_lock(engine: AsyncEngine) -> bool:
    async with engine.connect() as conn:
        waiting = await conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event = 'advisory'"
            )
        )
        return bool(waiting.scalar_one())


async def test_a_copy_received_while_its_job_starts_elsewhere_waits_for_it(
    engine: AsyncEngine, ledger: PostgresJobLedger
) -> None:
    # Two processes receive a job twice at once: the second start waits for the first's cap
    # lock and must then see the job running, not start it beside itself on the same slot.
    caps, job = ConcurrencyCaps(types={"mail": 2}), new_job("mail")
    first_started, let_commit = anyio.Event(), anyio.Event()
    second: list[CappedStart] = []

    async def first(conn: psycopg.AsyncConnection[TupleRow]) -> CappedStart:
        started = await start_capped(conn, [(job.id, "mail")], queue=QUEUE, caps=caps, lease=_LEASE)
        first_started.set()
        await let_commit.wait()
        return started

    async def start_second() -> None:
        again = await ledger.start_capped([(job.id, "mail")], queue=QUEUE, caps=caps, lease=_LEASE)
        second.append(again)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(in_transaction, engine, first)
        await first_started.wait()
        tasks.start_soon(start_second)
        with anyio.fail_after(10):
            while not await _waiting_on_a_lock(engine):  # noqa: ASYNC110 - polling the server
                await anyio.sleep(0.01)
        let_commit.set()
    assert second == [CappedStart(unrun=frozenset(), held_back=frozenset({job.id}))]
    assert await _slots(engine) == [("type:mail", job.id)]
    assert await _counted(engine) == 1


async def test_a_stray_copy_of_a_dead_or_unsent_job_is_acked_unrun_and_takes_no_slot(
    engine: AsyncEngine, ledger: PostgresJobLedger
) -> None:
    # The ledger says the job is not in SQS (dead, or waiting in the outbox): a copy of its
    # message must neither run beside the cap nor move the row.
    caps = ConcurrencyCaps(types={"mail": 3})
    dead, unsent, fresh = (new_job("mail", n=str(n)) for n in range(3))
    for job in (dead, unsent):
        assert await ledger.add(Envelope(job), due=None, send_now=False) == ""
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE jobs SET status = 'dead' WHERE id = :id"), {"id": dead.id})
    received = [(job.id, "mail") for job in (dead, unsent, fresh)]
    start = await ledger.start_capped(received, queue=QUEUE, caps=caps, lease=_LEASE)
    assert start == CappedStart(unrun=frozenset({dead.id, unsent.id}), held_back=frozenset())
    assert await _slots(engine) == [("type:mail", fresh.id)]
    assert await _states(engine) == {dead.id: "dead", unsent.id: "ready", fresh.id: "running"}


async def _counted(engine: AsyncEngine) -> int:
    # The slots that count: each names the receipt its job still runs under.
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT count(*) FROM job_cap_leases c JOIN jobs j ON j.id = c.job_id"
                " AND j.receipt = c.receipt AND j.status = 'running'"
            )
        )
        return int(rows.scalar_one())


async def test_a_job_received_twice_in_one_batch_starts_once(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, engine: AsyncEngine
) -> None:
    # Two copies of one job in one receive: one slot, one run; the other copy waits.
    urls = fresh_named_queues([QUEUE], visibility_timeout=_SECONDS)
    caps, job = ConcurrencyCaps(types={"mail": 2}), new_job("mail")
    sender = Sender(sqs_client, urls[QUEUE].queue_url)
    assert await sender.send_many([Envelope(job), Envelope(job)]) == 2
    async with _opened(sqs_client, urls, engine, caps, QUEUE) as backend:
        received = await backend.queue(QUEUE).receive(10)
        while not received:
            received = await backend.queue(QUEUE).receive(10)
    assert [message.job.id for message in received] == [job.id]
    assert await _slots(engine) == [("type:mail", job.id)]
