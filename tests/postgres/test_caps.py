"""Core's concurrency caps contract on the Postgres backend: `twin` is a second backend on the
same database, as a second worker process would open it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.testing.jobs.caps_contract import (
    OTHER,
    QUEUE,
    Capped,
    CappedSubject,
    CapsContract,
)
from skincare_postgres import postgres_backend

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
