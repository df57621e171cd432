"""The periodic-jobs contract on the in-memory backend."""

from collections.abc import AsyncIterator

import pytest

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs import memory_backend
from skincare_core.testing.jobs.periodic_contract import PeriodicContract


class TestInMemoryPeriodicContract(PeriodicContract):
    @pytest.fixture
    async def backend(self) -> AsyncIterator[Backend]:
        async with memory_backend() as backend:
            yield backend
