"""The history contract on the in-memory backend."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from skincare_core.testing.jobs import InMemoryQueues, memory_backend
from skincare_core.testing.jobs.contract import QueueSubject
from skincare_core.testing.jobs.history_contract import HistoryContract


class TestInMemoryHistoryContract(HistoryContract):
    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        queues = InMemoryQueues(
            visibility_timeout=timedelta(seconds=0.2), wait=timedelta(seconds=0.05)
        )
        async with memory_backend(queues, names=("contract-a", "contract-b")) as backend:
            yield QueueSubject(
                backend.queue("contract-a"),
                backend.dead_letters,
                timedelta(seconds=0.2),
                timedelta(seconds=0.1),
                backend.stats,
                other=backend.queue("contract-b"),
                sink=backend.sink,
                outcomes=backend.outcomes,
                history=backend.history,
            )
