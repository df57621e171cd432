"""Core's queue contract suite, unchanged, on the SQS backend against moto's HTTP server, with
its job ledger on the embedded PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from skincare_core.testing.jobs.contract import QueueContract, QueueSubject
from skincare_postgres import PostgresJobLedger
from skincare_sqs import sqs_backend
from tests.sqs.conftest import ProvisionNamed


@pytest.mark.slow
class TestSqsQueueContract(QueueContract):
    """Every part of the contract: delivery, delays, unique keys, cancel and named queues."""

    @pytest.fixture
    async def subject(
        self, sqs_client: Any, fresh_named_queues: ProvisionNamed, ledger: PostgresJobLedger
    ) -> AsyncIterator[QueueSubject]:
        urls = fresh_named_queues(["default", "other"])
        async with sqs_backend(
            sqs_client, urls=urls, ledger=ledger, queues=urls, wait_time_seconds=1
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
                priorities=False,
            )
