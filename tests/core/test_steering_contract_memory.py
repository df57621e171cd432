"""The steering contract (pauses, run now, cancel) on the in-memory backend."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs import InMemoryQueues, memory_backend
from skincare_core.testing.jobs.steering_contract import SteeringContract


class TestInMemorySteeringContract(SteeringContract):
    @pytest.fixture
    async def backend(self) -> AsyncIterator[Backend]:
        queues = InMemoryQueues(wait=timedelta(seconds=0.2))
        async with memory_backend(queues) as backend:
            yield backend
