"""Core's queue contract suite, unchanged, on PostgresQueue against a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from skincare_core.testing.jobs.contract import QueueContract, QueueSubject
from skincare_postgres import PostgresQueue


@pytest.mark.slow
class TestPostgresQueueContract(QueueContract):
    @pytest.fixture
    async def subject(self, queue: PostgresQueue) -> AsyncIterator[QueueSubject]:
        yield QueueSubject(queue, queue, timedelta(seconds=1), timedelta(seconds=0.5))
