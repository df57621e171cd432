"""Core's queue contract suite, unchanged, on SqsQueue against moto's HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest

from skincare_core.testing.jobs.contract import QueueContract, QueueSubject
from skincare_sqs import SqsQueue


@pytest.mark.slow
class TestSqsQueueContract(QueueContract):
    @pytest.fixture
    async def subject(
        self, sqs_client: Any, fresh_queues: Callable[..., Any]
    ) -> AsyncIterator[QueueSubject]:
        urls = fresh_queues(visibility_timeout=1)
        queue = SqsQueue(
            sqs_client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1
        )
        yield QueueSubject(queue, queue, timedelta(seconds=1), timedelta(seconds=1))
