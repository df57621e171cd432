"""Concurrency caps on SQS: a received job that a full cap holds back goes back to SQS unrun.

The caps are counted in the job ledger's database (`JobLedger.start_capped`); this module
returns the jobs it held back. SQS counts every receive of a message (ApproximateReceiveCount,
and the redrive policy's maxReceiveCount with it): a held-back message merely made visible
again would keep its count, and a job held back often enough would reach the DLQ without ever
running. So each is sent again as a new message, whose count starts at none, carrying the
attempts it spent before and its snoozes as a snooze does (`wire.snooze_attributes`); then the
received message is deleted. Sent before the delete: a failed delete leaves one duplicate
delivery, never a lost job.

The new message is visible at once: a delay (whole seconds, 1 s at least) would send the
waiting jobs round in step, all hidden when a slot frees. Instead a receive that held back
every job it got waits, its messages still leased (`Settles`): until a job of its queue
settles in this process (its slot may be free now), at most `CAP_WAIT`; then it tries them
once more and sends back those still held back. So a slot freed in the process that ran its
job is taken again at once, one freed elsewhere within about `CAP_WAIT`, and the waiting jobs
cost each idle receiver a receive, a send and a delete per `CAP_WAIT`, however many wait.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

import anyio

from skincare_core.jobs.job import Message
from skincare_sqs.client import call
from skincare_sqs.wire import snooze_attributes

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )

logger = logging.getLogger(__name__)

CAP_WAIT = timedelta(seconds=0.25)
"""The longest a receive that held back every job it got waits before it returns: how soon a
slot freed by another process is taken (within about this), against the requests the waiting
jobs cost an idle receiver (four rounds of a receive, a send and a delete a second)."""


class Settles:
    """The jobs this queue settled, counted, so that a receive held back by a full cap can
    wait for the next one."""

    def __init__(self) -> None:
        self.count = 0
        self._event: anyio.Event | None = None

    def settled(self) -> None:
        """A job of this queue was acked, retried or dead-lettered: wake the waiters."""
        self.count += 1
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self, since: int, most: timedelta) -> None:
        """Until a job settles after `count` was `since` (at once if one did), at most
        `most`."""
        if self.count != since:
            return
        if self._event is None:
            self._event = anyio.Event()
        with anyio.move_on_after(most.total_seconds()):
            await self._event.wait()


async def hold_back(
    client: SQSClient, queue_url: str, held: Sequence[tuple[str, Message]]
) -> builtins.list[str]:
    """Send each (body as received, message) again, visible at once and spending no attempt,
    then delete the received ones that were sent again; the receipts deleted. A message whose
    send or delete failed is logged and left to come back when its lease ends."""
    entries: builtins.list[SendMessageBatchRequestEntryTypeDef] = [
        {
            "Id": str(n),
            "MessageBody": body,
            "MessageAttributes": snooze_attributes(
                m.job, spent=m.attempts - 1, snoozes=m.snoozes, due=None
            ),
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
