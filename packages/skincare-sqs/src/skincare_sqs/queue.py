"""SqsQueue: the core Queue, JobSink and DeadLetters ports on one Amazon SQS queue and its DLQ
(boto3 in threads).

With a job ledger (`skincare_sqs.ledger`, the database beside the outbox) it keeps the whole
queue contract: unique keys, cancel and delays past SQS's 15 minutes. Without one it is SQS
alone: delays of up to 15 minutes, no unique keys (a ValueError), and cancel finds nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.envelope import Envelope, check_unique_key, due_at
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_sqs.acks import AckBatcher
from skincare_sqs.calls import call, call_on_receipt
from skincare_sqs.dead_lettering import DeadLettering
from skincare_sqs.dead_letters import SqsDeadLetters
from skincare_sqs.deletions import LedgeredDeletes
from skincare_sqs.leases import Leases
from skincare_sqs.ledger import JobLedger
from skincare_sqs.ledgered import enqueue_through
from skincare_sqs.received import ReceivedBodies
from skincare_sqs.sending import Sender, now
from skincare_sqs.visibility import extend_leases
from skincare_sqs.wire import (
    SqsMessage,
    job_attributes,
    receive_count,
    sent_at,
    visibility_seconds,
)

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

_BATCH = 10


class SqsQueue:
    """A source queue and its DLQ (`dead_letters`, the operator's view of it). Acks are batched;
    a receipt this process saw superseded (SQS may still accept it) is ignored, and SQS's
    stale-receipt errors are swallowed. Dead-lettering forwards the body as it was received,
    stamped with why and when."""

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
        ledger: JobLedger | None = None,
    ) -> None:
        _check_long_poll(client, wait_time_seconds)
        self.name = name
        self._client = client
        self._ledger = ledger
        self._sender = Sender(client, queue_url)
        self._running = ReceivedBodies()  # receipt -> id of a job the ledger marked running
        self._queue_url = queue_url
        self._dlq_url = dlq_url
        self._wait = wait_time_seconds
        self._hold = visibility_seconds(dead_letter_hold)
        self._leases = Leases()
        self._bodies = ReceivedBodies()
        self._dead_lettering = DeadLettering(
            client, queue_url=queue_url, dlq_url=dlq_url, leases=self._leases
        )
        deletes = LedgeredDeletes(
            client, queue_url=queue_url, queue=name, running=self._running, ledger=ledger
        )
        self._acks = AckBatcher(deletes, ack_linger.total_seconds())
        self.dead_letters = SqsDeadLetters(
            client,
            queue_url=queue_url,
            dlq_url=dlq_url,
            hold_seconds=self._hold,
            name=name,
            ledger=ledger,
        )

    async def enqueue(
        self,
        job: Job,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
    ) -> bool:
        """Send the job as JSON, its id and type as attributes, hidden until it is due.

        With a ledger: False when a live job holds `unique_key`; a job due more than 15 minutes
        from now waits in the ledger's outbox until the relay sends it. Without one: a delay of
        at most 15 minutes (DelaySeconds) and no key (ValueError). JobTooLarge and ValueError
        before any request.
        """
        due = due_at(delay=delay, not_before=not_before, now=now())
        check_unique_key(unique_key)
        if self._ledger is not None:
            envelope = Envelope(job, self.name, due, unique_key)
            return await enqueue_through(self._ledger, self._sender, envelope)
        if unique_key is not None:
            raise ValueError("SQS cannot enforce a unique key without a job ledger")
        await self._sender.send(job, due)
        return True

    async def cancel(self, job_id: str) -> bool:
        """Cancel a waiting or scheduled job of this queue; whether one was cancelled.

        Needs the ledger (without one: always False). A job still in the outbox is deleted; one
        already sent is marked cancelled and acked unrun when it is received. A running job
        (received, and not settled since) is not interrupted: False; so is one whose worker
        died, until it is acked, nacked or dead.
        """
        if self._ledger is None:
            return False
        return await self._ledger.cancel(job_id, self.name)

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Send in SendMessageBatch calls of ten; every job is encoded (and checked) first. A
        `not_before` becomes DelaySeconds (capped at 15 minutes). No ledger is consulted: this
        sends rows the relay claimed, whose keys the ledger already checked. Returns how many
        were sent."""
        return await self._sender.send_many(envelopes)

    async def receive(self, max_messages: int = 1) -> builtins.list[Message]:
        """Long-poll up to min(max_messages, 10); bodies that are not jobs go to the DLQ."""
        response = await call(
            self._client.receive_message,
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=max(1, min(max_messages, _BATCH)),
            WaitTimeSeconds=self._wait,
            MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
            MessageAttributeNames=["All"],
        )
        accepted = [await self._accept(raw) for raw in response.get("Messages", [])]
        return await self._start([message for message in accepted if message is not None])

    async def ack(self, message: Message) -> None:
        """Delete the message (batched with concurrent acks)."""
        self._bodies.pop(message.receipt)
        if self._leases.is_stale(message.receipt):
            return
        await self._acks.ack(message.receipt)
        self._leases.forget(message.receipt)

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """Delete the messages in DeleteMessageBatch calls of ten (stale receipts skipped)."""
        for message in messages:
            self._bodies.pop(message.receipt)
        receipts = [m.receipt for m in messages if not self._leases.is_stale(m.receipt)]
        await self._acks.ack_many(receipts)
        for receipt in receipts:
            self._leases.forget(receipt)

    async def nack(self, message: Message, delay: timedelta) -> None:
        """Make the message visible again after `delay` (whole seconds, at most 12 h)."""
        self._bodies.pop(message.receipt)
        self._running.pop(message.receipt)
        moved = await self._change_visibility(message.receipt, visibility_seconds(delay))
        if moved and self._ledger is not None:
            await self._ledger.retry(message.job.id)

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep the leases for another `visibility` from now, ten per request."""
        receipts = [m.receipt for m in messages if not self._leases.is_stale(m.receipt)]
        await extend_leases(self._client, self._queue_url, receipts, visibility_seconds(visibility))

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Send the body as received to the DLQ, stamped, then delete it (live lease only)."""
        body = self._bodies.pop(message.receipt)
        # Holding the lease first proves the receipt is live; a stale one moves nothing.
        if not await self._change_visibility(message.receipt, self._hold):
            return
        if body is None:  # received by another SqsQueue: the job is all there is
            body = encode_job(message.job)
        message_id = self._leases.message_id(message.receipt) or ""
        moved = await self._dead_lettering.move(
            message.receipt,
            body,
            job_attributes(message.job),
            reason=reason,
            attempts=message.attempts,
            message_id=message_id,
        )
        self._running.pop(message.receipt)
        if moved and self._ledger is not None:
            await self._ledger.finish([message.job.id], queue=self.name, failed=True)

    async def _accept(self, raw: SqsMessage) -> Message | None:
        receipt, attempts = raw["ReceiptHandle"], receive_count(raw)
        self._leases.received(raw["MessageId"], receipt)
        try:
            job = decode_job(raw["Body"])
        except InvalidJob as exc:
            if await self._dead_lettering.reject(raw, str(exc)) and self._ledger is not None:
                await self._ledger.count_dead(self.name, 1)
            return None
        self._bodies.keep(receipt, raw["Body"])
        return Message(receipt=receipt, job=job, attempts=attempts, enqueued_at=sent_at(raw))

    async def _start(self, messages: builtins.list[Message]) -> builtins.list[Message]:
        # One statement a batch: cancelled jobs are acked unrun, the others marked running.
        if self._ledger is None or not messages:
            return messages
        cancelled = await self._ledger.start([m.job.id for m in messages])
        for message in messages:
            if message.job.id in cancelled:
                self._bodies.pop(message.receipt)
                await self._acks.ack(message.receipt)
            else:
                self._running.keep(message.receipt, message.job.id)
        return [m for m in messages if m.job.id not in cancelled]

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


def _check_long_poll(client: SQSClient, wait_time_seconds: int) -> None:
    # An empty long poll answers after the wait: a shorter read timeout fails every one.
    # botocore's Config keeps its options as attributes its stubs do not declare.
    read_timeout = vars(client.meta.config)["read_timeout"]
    if wait_time_seconds >= read_timeout:
        raise ValueError(
            f"wait_time_seconds ({wait_time_seconds}) must be below the client's "
            f"read timeout ({read_timeout} s)"
        )
