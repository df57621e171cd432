"""SqsQueue: the core Queue, JobSink and DeadLetters ports on Amazon SQS (boto3 in threads).

Named queues, unique keys, cancel and delays past SQS's 15 minutes are not built on SQS yet:
one SQS queue serves every named queue (see `sqs_backend`), a direct enqueue takes a delay of up
to 15 minutes and no unique key, and cancel finds nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.envelope import Envelope, due_at
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.ports import DeadLetter
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_sqs.acks import AckBatcher
from skincare_sqs.calls import call, call_on_receipt
from skincare_sqs.dead_lettering import DeadLettering
from skincare_sqs.dead_letters import SqsDeadLetters
from skincare_sqs.errors import SqsUnavailable
from skincare_sqs.leases import Leases
from skincare_sqs.received import ReceivedBodies
from skincare_sqs.wire import SqsMessage, job_attributes, receive_count, visibility_seconds

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        DeleteMessageBatchResultTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )

_BATCH = 10
MAX_DELAY = timedelta(minutes=15)
"""SQS's DelaySeconds limit."""


class SqsQueue:
    """A source queue and its DLQ. Acks are batched; a receipt this process saw superseded
    (SQS may still accept it) is ignored, and SQS's stale-receipt errors are swallowed.
    Dead-lettering forwards the body as it was received, stamped with why and when."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        dlq_url: str,
        wait_time_seconds: int = 20,
        ack_linger: timedelta = timedelta(milliseconds=2),
        dead_letter_hold: timedelta = timedelta(seconds=5),
        name: str = DEFAULT_QUEUE,
    ) -> None:
        _check_long_poll(client, wait_time_seconds)
        self.name = name
        self._client = client
        self._queue_url = queue_url
        self._dlq_url = dlq_url
        self._wait = wait_time_seconds
        self._hold = visibility_seconds(dead_letter_hold)
        self._leases = Leases()
        self._bodies = ReceivedBodies()
        self._dead_lettering = DeadLettering(
            client, queue_url=queue_url, dlq_url=dlq_url, leases=self._leases
        )
        self._acks = AckBatcher(self._delete_batch, ack_linger.total_seconds())
        self._dead = SqsDeadLetters(
            client, queue_url=queue_url, dlq_url=dlq_url, hold_seconds=self._hold
        )

    async def enqueue(
        self,
        job: Job,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
    ) -> bool:
        """Send the job as JSON, its id and type as attributes, hidden for the delay (DelaySeconds,
        at most 15 minutes); JobTooLarge and ValueError before any request. SQS cannot keep a
        key unique: a `unique_key` is a ValueError (the outbox enforces keys on its rows)."""
        body = encode_job(job)
        if unique_key is not None:
            raise ValueError("SQS cannot enforce a unique key on a direct enqueue")
        seconds = _delay_seconds(
            due_at(delay=delay, not_before=not_before, now=_now()), strict=True
        )
        await call(
            self._client.send_message,
            QueueUrl=self._queue_url,
            MessageBody=body,
            MessageAttributes=job_attributes(job),
            DelaySeconds=seconds,
        )
        return True

    async def cancel(self, job_id: str) -> bool:
        """Always False: SQS cannot remove a message it has not handed out, so nothing is
        cancelled (a running job would not be interrupted either)."""
        return False

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Send in SendMessageBatch calls of ten; every job is encoded (and checked) first. A
        `not_before` becomes DelaySeconds (capped at 15 minutes); unique keys were enforced on
        the outbox rows before the relay sent them. Returns how many were sent."""
        entries: builtins.list[SendMessageBatchRequestEntryTypeDef] = [
            {
                "Id": str(n),
                "MessageBody": encode_job(e.job),
                "MessageAttributes": job_attributes(e.job),
                "DelaySeconds": _delay_seconds(e.not_before, strict=False),
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

    async def receive(self, max_messages: int = 1) -> builtins.list[Message]:
        """Long-poll up to min(max_messages, 10); bodies that are not jobs go to the DLQ."""
        response = await call(
            self._client.receive_message,
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=max(1, min(max_messages, _BATCH)),
            WaitTimeSeconds=self._wait,
            MessageSystemAttributeNames=["ApproximateReceiveCount"],
            MessageAttributeNames=["All"],
        )
        accepted = [await self._accept(raw) for raw in response.get("Messages", [])]
        return [message for message in accepted if message is not None]

    async def ack(self, message: Message) -> None:
        """Delete the message (batched with concurrent acks)."""
        self._bodies.pop(message.receipt)
        if self._leases.is_stale(message.receipt):
            return
        await self._acks.ack(message.receipt)
        self._leases.forget(message.receipt)

    async def nack(self, message: Message, delay: timedelta) -> None:
        """Make the message visible again after `delay` (whole seconds, at most 12 h)."""
        self._bodies.pop(message.receipt)
        await self._change_visibility(message.receipt, visibility_seconds(delay))

    async def extend(self, message: Message, visibility: timedelta) -> None:
        """Keep the lease for another `visibility` from now."""
        await self._change_visibility(message.receipt, visibility_seconds(visibility))

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Send the body as received to the DLQ, stamped, then delete it (live lease only)."""
        body = self._bodies.pop(message.receipt)
        # Holding the lease first proves the receipt is live; a stale one moves nothing.
        if not await self._change_visibility(message.receipt, self._hold):
            return
        if body is None:  # received by another SqsQueue: the job is all there is
            body = encode_job(message.job)
        message_id = self._leases.message_id(message.receipt) or ""
        await self._dead_lettering.move(
            message.receipt,
            body,
            job_attributes(message.job),
            reason=reason,
            attempts=message.attempts,
            message_id=message_id,
        )

    async def count(self, *, queue: str | None = None) -> int:
        """How many messages the DLQ holds (of every named queue: they share it)."""
        return await self._dead.count()

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> builtins.list[DeadLetter]:
        """Dead jobs, oldest first, optionally of one type (every named queue shares the DLQ)."""
        return await self._dead.list(job_type=job_type, limit=limit)

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id; None if the DLQ holds no job of that id."""
        return await self._dead.get(job_id)

    async def redrive(self, job_id: str) -> bool:
        """Send one dead job back to the source queue (a new message: attempts reset)."""
        return await self._dead.redrive(job_id)

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Send every dead job (of one type) back; returns how many. Every named queue shares
        the one DLQ, so `queue` selects nothing more."""
        return await self._dead.redrive_all(job_type=job_type)

    async def purge(self) -> int:
        """Delete every dead job; returns how many."""
        return await self._dead.purge()

    async def _accept(self, raw: SqsMessage) -> Message | None:
        receipt, attempts = raw["ReceiptHandle"], receive_count(raw)
        self._leases.received(raw["MessageId"], receipt)
        try:
            job = decode_job(raw["Body"])
        except InvalidJob as exc:
            await self._dead_lettering.reject(raw, str(exc))
            return None
        self._bodies.keep(receipt, raw["Body"])
        return Message(receipt=receipt, job=job, attempts=attempts)

    async def _change_visibility(self, receipt: str, seconds: int) -> bool:
        if self._leases.is_stale(receipt):
            return False
        response = await call_on_receipt(
            self._client.change_message_visibility,
            QueueUrl=self._queue_url,
            ReceiptHandle=receipt,
            VisibilityTimeout=seconds,
        )
        return response is not None

    async def _delete_batch(
        self, entries: builtins.list[DeleteMessageBatchRequestEntryTypeDef]
    ) -> DeleteMessageBatchResultTypeDef:
        return await call(
            self._client.delete_message_batch, QueueUrl=self._queue_url, Entries=entries
        )


def _check_long_poll(client: SQSClient, wait_time_seconds: int) -> None:
    # An empty long poll answers after the wait: a shorter read timeout fails every one.
    # botocore's Config keeps its options as attributes its stubs do not declare.
    read_timeout = vars(client.meta.config)["read_timeout"]
    if wait_time_seconds >= read_timeout:
        raise ValueError(
            f"wait_time_seconds ({wait_time_seconds}) must be below the client's "
            f"read timeout ({read_timeout} s)"
        )


def _now() -> datetime:
    return datetime.now(UTC)


def _delay_seconds(due: datetime | None, *, strict: bool) -> int:
    if due is None:
        return 0
    wait = due - _now()
    if strict and wait > MAX_DELAY:
        raise ValueError(f"SQS delays a message by at most {MAX_DELAY}, asked for {wait}")
    return visibility_seconds(min(max(wait, timedelta(0)), MAX_DELAY))
