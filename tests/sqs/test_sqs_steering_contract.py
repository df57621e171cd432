"""Core's steering contract on the SQS backend: pauses kept in the ledger's PostgreSQL (a paused
job waits in the ledger, never in SQS's receive counts), run now and cancel through the ledger,
with the relay running as in a worker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs.steering_contract import SteeringContract
from skincare_postgres import PostgresJobLedger, PostgresPauses
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed
from tests.sqs.relaying import relay_running


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
        async with backend_context as backend, relay_running(backend):
            yield backend
