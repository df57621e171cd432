"""Core's history contract on the SQS backend against moto's HTTP server, the history kept in
the job ledger's database (the embedded PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from skincare_core.testing.jobs.contract import QueueSubject
from skincare_core.testing.jobs.history_contract import HistoryContract
from skincare_postgres import PostgresJobLedger
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed


@pytest.mark.slow
class TestSqsHistoryContract(HistoryContract):
    @pytest.fixture
    async def subject(
        self, sqs_client: Any, fresh_named_queues: ProvisionNamed, ledger: PostgresJobLedger
    ) -> AsyncIterator[QueueSubject]:
        urls = fresh_named_queues(["default", "other"])
        async with sqs_backend(
            sqs_client,
            urls=urls,
            ledger=ledger,
            queues=urls,
            wait_time_seconds=1,
            history=ledger.history,
        ) as backend:
            yield QueueSubject(
                backend.queue("default"),
                backend.dead_letters,
                timedelta(seconds=1),
                timedelta(seconds=1),
                backend.stats,
                other=backend.queue("other"),
                sink=backend.sink,
                outcomes=backend.outcomes,
                history=backend.history,
            )
