"""Core's steering contract on the SQS backend: pauses kept in the ledger's PostgreSQL (a paused
job waits in the ledger, never in SQS's receive counts), run now and cancel through the ledger,
with the relay running as in a worker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.testing.jobs.steering_contract import SteeringContract
from skincare_postgres import PostgresJobLedger, PostgresPauses
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed


@pytest.mark.slow
class TestSqsSteeringContract(SteeringContract):
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
            pauses=PostgresPauses(engine),
        )
        async with backend_context as backend:
            assert backend.outbox is not None
            relay = OutboxRelay(storage=backend.outbox, sink=backend.sink)
            stop = anyio.Event()

            async def relay_until_stopped() -> None:
                # Stopped between batches, never cancelled inside one.
                while not stop.is_set():
                    if not await relay.relay_once():
                        await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay_until_stopped)
                yield backend
                stop.set()
