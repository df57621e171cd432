"""Core's periodic-jobs contract on the SQS backend: the ticks' records and the rate windows
are kept in the ledger's PostgreSQL, and a claimed tick's job reaches SQS through the relay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.testing.jobs.periodic_contract import PeriodicContract
from skincare_postgres import PostgresJobLedger, PostgresRateLimiter, PostgresScheduleStore
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed


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
        async with backend_context as backend:
            assert backend.outbox is not None
            relay = OutboxRelay(storage=backend.outbox, sink=backend.sink)
            stop = anyio.Event()

            async def relay_until_stopped() -> None:
                # Stopped between batches, never cancelled inside one: a claim cut off mid-way
                # would leave its pooled connection checked out.
                while not stop.is_set():
                    if not await relay.relay_once():
                        await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay_until_stopped)
                yield backend
                stop.set()
