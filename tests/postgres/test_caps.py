"""Core's concurrency caps contract on the Postgres backend: `twin` is a second backend on the
same database, as a second worker process would open it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta

import anyio
import psycopg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Message, new_job
from skincare_core.testing.jobs.caps_contract import (
    OTHER,
    QUEUE,
    Capped,
    CappedSubject,
    CapsContract,
)
from skincare_postgres import postgres_backend
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.capped_claims import LOCK

# Long enough that no lease ends while a test receives on a loaded machine (a 1 s lease did).
_LEASE = timedelta(seconds=3)
_POLL = timedelta(seconds=0.3)


class TestPostgresCaps(CapsContract):
    @pytest.fixture
    def capped(self, engine: AsyncEngine) -> Capped:
        @asynccontextmanager
        async def subject(caps: ConcurrencyCaps) -> AsyncIterator[CappedSubject]:
            def opened(*queues: str) -> AbstractAsyncContextManager[Backend]:
                return postgres_backend(
                    engine, queues=queues, visibility_timeout=_LEASE, poll_interval=_POLL, caps=caps
                )

            async with opened(QUEUE, OTHER) as backend, opened(QUEUE) as twin:
                yield CappedSubject(
                    backend.queue(QUEUE), backend.queue(OTHER), twin.queue(QUEUE), _LEASE, _POLL
                )

        return subject


@pytest.mark.anyio
async def test_only_a_claim_that_meets_a_capped_type_waits_for_the_caps(
    engine: AsyncEngine,
) -> None:
    caps = ConcurrencyCaps(types={"mail": 1})
    opened = postgres_backend(
        engine, queues=(QUEUE,), visibility_timeout=_LEASE, poll_interval=_POLL, caps=caps
    )
    async with opened as backend:
        queue = backend.queue(QUEUE)
        await enqueue(queue, new_job("report"))
        await enqueue(queue, new_job("mail"))
        async with await psycopg.AsyncConnection.connect(libpq_conninfo(engine.url)) as other:
            # Another process's capped claim holds the mail cap's lock until it ends.
            await other.execute(LOCK, {"caps": ["type:mail"]})
            # The report, due first, is claimed while another claim holds the mail cap.
            with anyio.fail_after(5):
                [report] = await queue.receive(1)
            assert report.job.type == "report"
            got: list[Message] = []
            async with anyio.create_task_group() as tasks:

                async def claim() -> None:
                    got.extend(await queue.receive(1))

                tasks.start_soon(claim)
                await anyio.sleep(0.5)
                # The mail's claim waits for the cap until the other claim ends.
                assert got == []
                await other.rollback()
            assert [m.job.type for m in got] == ["mail"]
            # Having met a capped type, the next claim is a capped one; once it meets none (and
            # no full cap), the claim after it no longer waits for the caps.
            await queue.ack_many(got)
            await enqueue(queue, new_job("report"))
            with anyio.fail_after(5):
                assert [m.job.type for m in await queue.receive(1)] == ["report"]
            await enqueue(queue, new_job("report"))
            await other.execute(LOCK, {"caps": ["type:mail"]})
            with anyio.fail_after(5):
                assert [m.job.type for m in await queue.receive(1)] == ["report"]
            await other.rollback()
