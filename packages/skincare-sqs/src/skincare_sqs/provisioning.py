"""Creating each named queue's SQS queue and dead-letter queue with a redrive policy,
idempotently; finding them again by name."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from attrs import frozen

from skincare_sqs.client import call_blocking as call
from skincare_sqs.wire import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.literals import QueueAttributeNameType


@frozen
class QueueUrls:
    """Where a source queue and its dead-letter queue live."""

    queue_url: str
    dlq_url: str


def queue_name(prefix: str, queue: str) -> str:
    """The SQS queue of a named queue: `<prefix>-<queue>` (its DLQ adds `-dlq`)."""
    return f"{prefix}-{queue}"


def ensure_queues(
    client: SQSClient,
    prefix: str,
    queues: Iterable[str],
    *,
    max_receive_count: int = 5,
    visibility_timeout: int = 30,
) -> dict[str, QueueUrls]:
    """Create `<prefix>-<queue>` and its `-dlq` for each named queue unless they exist; the
    urls by named queue. Blocking, like `ensure_queue`.

    SQS moves a message received `max_receive_count` times to the DLQ itself, whatever the
    worker's retry policy: give it more than the most attempts any job type gets, so that the
    worker dead-letters (with the handler's reason) and SQS only moves what a dying worker left.
    """
    return {
        queue: ensure_queue(
            client,
            queue_name(prefix, queue),
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
        )
        for queue in queues
    }


def queue_urls(client: SQSClient, prefix: str, queues: Iterable[str]) -> dict[str, QueueUrls]:
    """The urls of each named queue's SQS queue and DLQ, which must exist (`ensure_queues`);
    SqsUnavailable naming the missing queue. Blocking."""
    urls = {}
    for queue in queues:
        name = queue_name(prefix, queue)
        source = call(client.get_queue_url, QueueName=name)["QueueUrl"]
        dlq = call(client.get_queue_url, QueueName=f"{name}-dlq")["QueueUrl"]
        urls[queue] = QueueUrls(queue_url=str(source), dlq_url=str(dlq))
    return urls


def ensure_queue(
    client: SQSClient, name: str, *, max_receive_count: int = 5, visibility_timeout: int = 30
) -> QueueUrls:
    """Create `<name>-dlq` and `<name>` (redrive policy to the DLQ) unless they exist.

    Both take SQS's largest messages, so a body of any size the source accepted still fits in
    the DLQ with its stamp. Blocking (boto3 in this thread): provisioning runs at startup,
    before any event loop work.
    """
    largest: dict[QueueAttributeNameType, str] = {"MaximumMessageSize": str(MAX_MESSAGE_BYTES)}
    dlq_url = call(client.create_queue, QueueName=f"{name}-dlq")["QueueUrl"]
    call(client.set_queue_attributes, QueueUrl=dlq_url, Attributes=largest)
    arn_attrs = call(client.get_queue_attributes, QueueUrl=dlq_url, AttributeNames=["QueueArn"])
    policy = {
        "deadLetterTargetArn": arn_attrs["Attributes"]["QueueArn"],
        "maxReceiveCount": str(max_receive_count),
    }
    attributes: dict[QueueAttributeNameType, str] = {
        "RedrivePolicy": json.dumps(policy),
        "VisibilityTimeout": str(visibility_timeout),
        **largest,
    }
    queue_url = call(client.create_queue, QueueName=name)["QueueUrl"]
    # Set, not passed to create_queue: CreateQueue fails when an existing queue's attributes
    # differ, and setting them again is what makes this idempotent and convergent.
    call(client.set_queue_attributes, QueueUrl=queue_url, Attributes=attributes)
    return QueueUrls(queue_url=str(queue_url), dlq_url=str(dlq_url))


def max_receive_count(client: SQSClient, queue_url: str) -> int | None:
    """The maxReceiveCount of the queue's redrive policy (None: the queue has none). Blocking."""
    answer = call(client.get_queue_attributes, QueueUrl=queue_url, AttributeNames=["RedrivePolicy"])
    policy = answer.get("Attributes", {}).get("RedrivePolicy")
    return None if policy is None else int(json.loads(policy)["maxReceiveCount"])
