"""Snoozes on SQS: a snoozed job is a new message carrying its spent attempts and snoozes, so
SQS's receive count (and the redrive policy) never counts a snooze; a snooze past SQS's
15-minute delay hops on, unrun, until it ends."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

import anyio
import pytest

from skincare_core.jobs.job import Job
from skincare_sqs import SqsQueue
from skincare_sqs.client import now
from skincare_sqs.wire import snooze_attributes

pytestmark = pytest.mark.anyio


def _queue(client: Any, urls: Any) -> SqsQueue:
    return SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1)


async def _send(client: Any, url: str, job: Job, attributes: Any) -> None:
    body = json.dumps({"id": job.id, "type": job.type, "payload": dict(job.payload)})
    send = partial(
        client.send_message, QueueUrl=url, MessageBody=body, MessageAttributes=attributes
    )
    await anyio.to_thread.run_sync(send)


async def test_a_message_of_an_ended_snooze_counts_the_attempts_it_carries(
    sqs_client: Any, fresh_queues: Callable[..., Any]
) -> None:
    urls = fresh_queues()
    job = Job("j", "t", {"n": 1})
    attributes = snooze_attributes(job, spent=2, snoozes=3, due=now() - timedelta(seconds=1))
    await _send(sqs_client, urls.queue_url, job, attributes)
    [message] = await _queue(sqs_client, urls).receive(10)
    assert (message.job, message.attempts, message.snoozes) == (job, 3, 3)


async def test_a_long_snooze_hops_on_unrun_until_it_ends(
    sqs_client: Any, fresh_queues: Callable[..., Any]
) -> None:
    urls = fresh_queues()
    job = Job("j", "t", {"n": 1})
    attributes = snooze_attributes(job, spent=1, snoozes=1, due=now() + timedelta(hours=2))
    await _send(sqs_client, urls.queue_url, job, attributes)
    queue = _queue(sqs_client, urls)
    assert await queue.receive(10) == []
    counts = sqs_client.get_queue_attributes(
        QueueUrl=urls.queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    # Sent on, delayed by SQS's most (15 minutes); the message received is gone.
    assert (
        counts["ApproximateNumberOfMessages"],
        counts["ApproximateNumberOfMessagesDelayed"],
    ) == (
        "0",
        "1",
    )
