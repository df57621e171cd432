"""The queue contract suite on the in-memory queue."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.jobs.contract import QueueContract, QueueSubject


class TestInMemoryQueueContract(QueueContract):
    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        queue = InMemoryQueue(
            visibility_timeout=timedelta(seconds=0.2), wait=timedelta(seconds=0.05)
        )
        yield QueueSubject(queue, queue, timedelta(seconds=0.2), timedelta(seconds=0.1))
