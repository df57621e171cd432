"""Sending jobs to one SQS queue: one SendMessage, or SendMessageBatch calls of ten."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job
from skincare_sqs.calls import call
from skincare_sqs.errors import SqsUnavailable
from skincare_sqs.wire import job_attributes, visibility_seconds

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

_BATCH = 10
MAX_DELAY = timedelta(minutes=15)
"""SQS's DelaySeconds limit."""


class Sender:
    """Sends to `queue_url`, each message hidden until its job is due (at most 15 minutes)."""

    def __init__(self, client: SQSClient, queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    async def send(self, job: Job, due: datetime | None) -> None:
        """One job; a due time more than 15 minutes away is a ValueError before any request."""
        body = encode_job(job)
        seconds = delay_seconds(due, strict=True)
        await call(
            self._client.send_message,
            QueueUrl=self._queue_url,
            MessageBody=body,
            MessageAttributes=job_attributes(job),
            DelaySeconds=seconds,
        )

    async def send_many(self, envelopes: Sequence[Envelope]) -> int:
        """Every job encoded (and checked) first, then sent ten a request, delays capped at 15
        minutes; returns how many were sent."""
        entries: builtins.list[SendMessageBatchRequestEntryTypeDef] = [
            {
                "Id": str(n),
                "MessageBody": encode_job(e.job),
                "MessageAttributes": job_attributes(e.job),
                "DelaySeconds": delay_seconds(e.not_before, strict=False),
            }
            for n, e in enumerate(envelopes)
        ]
        for start in range(0, len(entries), _BATCH):
            response = await call(
                self._client.send_message_batch,
                QueueUrl=self._queue_url,
                Entries=entries[start : start + _BATCH],
            )
            if failed := response.get("Failed"):
                raise SqsUnavailable("SendMessageBatch", f"{len(failed)} entries failed: {failed}")
        return len(entries)


def now() -> datetime:
    """The current time, UTC."""
    return datetime.now(UTC)


def due_beyond_delay(due: datetime | None) -> bool:
    """Whether a job due then is further away than SQS can delay a message."""
    return due is not None and due - now() > MAX_DELAY


def delay_seconds(due: datetime | None, *, strict: bool) -> int:
    """DelaySeconds for a job due then (0 if due); past 15 minutes a ValueError if `strict`,
    else 15 minutes."""
    if due is None:
        return 0
    wait = due - now()
    if strict and wait > MAX_DELAY:
        raise ValueError(f"SQS delays a message by at most {MAX_DELAY}, asked for {wait}")
    return visibility_seconds(min(max(wait, timedelta(0)), MAX_DELAY))
