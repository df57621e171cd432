"""Moving a received message to another queue: send the copy, then delete the original."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skincare_sqs.calls import call, call_on_receipt
from skincare_sqs.wire import Attributes

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


async def move(
    client: SQSClient,
    *,
    body: str,
    attributes: Attributes,
    to_url: str,
    from_url: str,
    receipt: str,
) -> None:
    """Send `body` with `attributes` to `to_url`, then delete the message of `receipt`.

    Send first, delete second: an interruption in between leaves a copy, never a loss.
    """
    await call(client.send_message, QueueUrl=to_url, MessageBody=body, MessageAttributes=attributes)
    await call_on_receipt(client.delete_message, QueueUrl=from_url, ReceiptHandle=receipt)
