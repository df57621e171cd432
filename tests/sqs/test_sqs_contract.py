"""Core's queue contract suite, unchanged, on the SQS backend against moto's HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest

from skincare_core.testing.jobs.contract import DeliveryContract, QueueSubject
from skincare_sqs import sqs_backend


@pytest.mark.slow
class TestSqsQueueContract(DeliveryContract):
    """The delivery half of the contract: delays, unique keys, cancel and named queues are not
    built on SQS yet (issue 17); with them this becomes QueueContract."""

    @pytest.fixture
    async def subject(
        self, sqs_client: Any, fresh_queues: Callable[..., Any]
    ) -> AsyncIterator[QueueSubject]:
        urls = fresh_queues(visibility_timeout=1)
        async with sqs_backend(
            sqs_client,
            queue_url=urls.queue_url,
            dlq_url=urls.dlq_url,
            outbox=None,
            wait_time_seconds=1,
        ) as backend:
            yield QueueSubject(
                backend.queue(),
                backend.dead_letters,
                timedelta(seconds=1),
                timedelta(seconds=1),
                backend.stats,
            )
