"""The SQS queue in the backend shape, with the outbox storage its relay forwards from."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import OutboxStorage
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_sqs.queue import SqsQueue
from skincare_sqs.stats import SqsQueueStats

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


@asynccontextmanager
async def sqs_backend(
    client: SQSClient,
    *,
    queue_url: str,
    dlq_url: str,
    outbox: OutboxStorage | None,
    wait_time_seconds: int = 20,
    queues: Iterable[str] = (DEFAULT_QUEUE,),
) -> AsyncIterator[Backend]:
    """The source queue and its DLQ as queue, dead letters, sink and stats.

    The business transaction cannot write to SQS, so its jobs wait in `outbox` (the database's
    outbox storage, entered by the caller) and a relay forwards them; None runs no relay. The
    boto3 client is the caller's; the queue holds no connection of its own to close.

    Every name in `queues` is served by the one SQS queue for now: named queues are not isolated
    from each other on SQS yet.
    """
    queue = SqsQueue(
        client, queue_url=queue_url, dlq_url=dlq_url, wait_time_seconds=wait_time_seconds
    )
    stats = SqsQueueStats(client, queue_url=queue_url, dlq_url=dlq_url)
    served = dict.fromkeys(queues, queue)
    yield Backend(queues=served, dead_letters=queue, sink=queue, outbox=outbox, stats=stats)
