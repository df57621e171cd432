"""Core's history contract on the Postgres backend against a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.testing.jobs.contract import QueueSubject
from skincare_core.testing.jobs.history_contract import HistoryContract
from skincare_postgres import postgres_backend


@pytest.mark.slow
class TestPostgresHistoryContract(HistoryContract):
    @pytest.fixture
    async def subject(self, engine: AsyncEngine) -> AsyncIterator[QueueSubject]:
        async with postgres_backend(
            engine,
            queues=("contract-a", "contract-b"),
            visibility_timeout=timedelta(seconds=1),
            poll_interval=timedelta(seconds=0.5),
        ) as backend:
            yield QueueSubject(
                backend.queue("contract-a"),
                backend.dead_letters,
                timedelta(seconds=1),
                timedelta(seconds=0.5),
                backend.stats,
                other=backend.queue("contract-b"),
                sink=backend.sink,
                outcomes=backend.outcomes,
                history=backend.history,
            )
