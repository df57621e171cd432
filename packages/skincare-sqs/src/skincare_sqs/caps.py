"""Concurrency caps on SQS: a received job that a full cap holds back goes back to SQS unrun.

The caps are counted in the job ledger's database (`JobLedger.start_capped`); this module
returns the jobs it held back. SQS counts every receive of a message (ApproximateReceiveCount,
and the redrive policy's maxReceiveCount with it): a held-back message merely made visible
again would keep its count, and a job held back often enough would reach the DLQ without ever
running. So each is sent again as a new message, whose count starts at none, carrying the
attempts it spent before and its snoozes as a snooze does (`wire.snooze_attributes`); then the
received message is deleted. Sent before the delete: a failed delete leaves one duplicate
delivery, never a lost job.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from skincare_core.jobs.job import Message
from skincare_sqs.client import call
from skincare_sqs.wire import snooze_attributes, visibility_seconds

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )

logger = logging.getLogger(__name__)

CAP_WAIT = timedelta(seconds=1)
"""How long a held-back job stays hidden before it is received again: SQS's shortest delay
but none. With none, the held-back jobs would go round the receivers without a pause; with
1 s a freed slot is taken within about a second (the next held-back message to come back),
while each waiting job costs a send and a delete per second."""


async def hold_back(
    client: SQSClient, queue_url: str, held: Sequence[tuple[str, Message]]
) -> builtins.list[str]:
    """Send each (body as received, message) again, hidden for `CAP_WAIT`, spending no attempt,
    then delete the received ones that were sent again; the receipts deleted. A message whose
    send or delete failed is logged and left to come back when its lease ends."""
    entries: builtins.list[SendMessageBatchRequestEntryTypeDef] = [
        {
            "Id": str(n),
            "MessageBody": body,
            "MessageAttributes": snooze_attributes(
                m.job, spent=m.attempts - 1, snoozes=m.snoozes, due=None
            ),
            "DelaySeconds": visibility_seconds(CAP_WAIT),
        }
        for n, (body, m) in enumerate(held)
    ]
    response = await call(client.send_message_batch, QueueUrl=queue_url, Entries=entries)
    sent = [held[int(entry["Id"])][1].receipt for entry in response.get("Successful", [])]
    _log_failures("SendMessageBatch", response.get("Failed", []))
    return await _delete(client, queue_url, sent)


async def _delete(client: SQSClient, queue_url: str, receipts: Sequence[str]) -> builtins.list[str]:
    if not receipts:
        return []
    entries: builtins.list[DeleteMessageBatchRequestEntryTypeDef] = [
        {"Id": str(n), "ReceiptHandle": receipt} for n, receipt in enumerate(receipts)
    ]
    response = await call(client.delete_message_batch, QueueUrl=queue_url, Entries=entries)
    _log_failures("DeleteMessageBatch", response.get("Failed", []))
    return [receipts[int(entry["Id"])] for entry in response.get("Successful", [])]


def _log_failures(operation: str, failed: Sequence[object]) -> None:
    if failed:
        extra = {"operation": operation, "count": len(failed), "first": str(failed[0])}
        logger.warning("sqs.cap_hold_back_failed", extra=extra)
