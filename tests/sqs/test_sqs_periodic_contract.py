"""Core's periodic-jobs contract on the SQS backend: the ticks' records and the rate windows
are kept in the ledger's PostgreSQL, and a claimed tick's job reaches SQS through the relay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs.periodic_contract import PeriodicContract
from skincare_postgres import PostgresJobLedger, PostgresRateLimiter, PostgresScheduleStore
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed
from tests.sqs.relaying import relay_running


@pytest.mark.slow
class TestSqsPeriodicContract(PeriodicContract):
    """One job per tick however many claim it, on SQS; windows shared through the database."""

    @pytest.fixture
    async def backend(
        self,
        sqs_client: Any,
        fresh_named_queues: ProvisionNamed,
        ledger: PostgresJobLedger,
        engine: AsyncEngine,
    ) -> AsyncIterator[Backend]:
        urls = fresh_named_queues(["default"])
        backend_context = sqs_backend(
            sqs_client,
            urls=urls,
            ledger=ledger,
            queues=urls,
            wait_time_seconds=1,
            schedules=PostgresScheduleStore(engine),
            rate_limiter=PostgresRateLimiter(engine),
        )
        async with backend_context as backend, relay_running(backend):
            yield backend
