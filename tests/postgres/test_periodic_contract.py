"""Core's periodic-jobs contract, unchanged, on the Postgres backend against a real server."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs.periodic_contract import PeriodicContract
from skincare_postgres import postgres_backend


class TestPostgresPeriodicContract(PeriodicContract):
    @pytest.fixture
    async def backend(self, engine: AsyncEngine) -> AsyncIterator[Backend]:
        async with postgres_backend(engine, poll_interval=timedelta(seconds=0.2)) as backend:
            yield backend
