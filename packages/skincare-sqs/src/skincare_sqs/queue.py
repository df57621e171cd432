"""SqsQueue: the core Queue and JobSink ports on one Amazon SQS queue (boto3 in threads), and
what it keeps of its leases: the newest receipt per message, the bodies as received, the jobs
the ledger marked running; acks in DeleteMessageBatch calls, leases extended in
ChangeMessageVisibilityBatch calls.

With a job ledger (`skincare_sqs.ledger`, the database beside the outbox) it keeps the whole
queue contract: unique keys, cancel and delays past SQS's 15 minutes. Without one it is SQS
alone: delays of up to 15 minutes, no unique keys (a ValueError), and cancel finds nothing.

SQS (and moto) may still accept an older receipt of a message that was received again, so
the queue remembers the newest receipt per message id it saw and ignores older ones.
Dead-lettering forwards a body exactly as SQS delivered it, never a re-encoding of the decoded
job: the DLQ keeps what the sender wrote, however the codec would have written it.
DeleteMessageBatch answers entry by entry: only a deleted entry is a finished job in the
ledger; one refused with a stale receipt is not, one refused otherwise is kept for the retry.
"""

from __future__ import annotations

import builtins
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

import anyio
from attrs import define, field, frozen

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.envelope import Envelope, check_unique_key, due_at
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_sqs.client import (
    BATCH_LIMIT,
    STALE_RECEIPT_CODES,
    Sender,
    SqsUnavailable,
    call,
    call_on_receipt,
    now,
)
from skincare_sqs.dead_letters import DeadLettering, SqsDeadLetters
from skincare_sqs.ledger import JobLedger, enqueue_through
from skincare_sqs.wire import (
    SqsMessage,
    job_attributes,
    receive_count,
    sent_at,
    visibility_seconds,
)

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        DeleteMessageBatchRequestEntryTypeDef,
        DeleteMessageBatchResultTypeDef,
    )

V = TypeVar("V")


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
        self._running = Kept[str]()  # receipt -> id of a job the ledger marked running
        self._queue_url = queue_url
        self._dlq_url = dlq_url
        self._wait = wait_time_seconds
        self._hold = visibility_seconds(dead_letter_hold)
        self._leases = Leases()
        self._bodies = Kept[str]()  # receipt -> body as received
        self._dead_lettering = DeadLettering(client, queue_url=queue_url, dlq_url=dlq_url)
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
            MaxNumberOfMessages=max(1, min(max_messages, BATCH_LIMIT)),
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
        if moved:
            self._leases.forget(message.receipt)
        self._running.pop(message.receipt)
        if moved and self._ledger is not None:
            await self._ledger.finish([message.job.id], queue=self.name, failed=True)

    async def _accept(self, raw: SqsMessage) -> Message | None:
        receipt, attempts = raw["ReceiptHandle"], receive_count(raw)
        self._leases.received(raw["MessageId"], receipt)
        try:
            job = decode_job(raw["Body"])
        except InvalidJob as exc:
            if await self._dead_lettering.reject(raw, str(exc)):
                self._leases.forget(receipt)
                if self._ledger is not None:
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


_MAX_REMEMBERED = 100_000


class Leases:
    """message id <-> newest receipt, for receipts this process received (bounded)."""

    def __init__(self, limit: int = _MAX_REMEMBERED) -> None:
        self._limit = limit
        self._message_of: OrderedDict[str, str] = OrderedDict()
        self._newest: dict[str, str] = {}

    def received(self, message_id: str, receipt: str) -> None:
        """A message came with this receipt: older receipts of it are stale from now on."""
        self._message_of[receipt] = message_id
        self._newest[message_id] = receipt
        while len(self._message_of) > self._limit:
            old_receipt, old_id = self._message_of.popitem(last=False)
            if self._newest.get(old_id) == old_receipt:
                del self._newest[old_id]

    def is_stale(self, receipt: str) -> bool:
        """True if this process later received the same message under a newer receipt."""
        message_id = self._message_of.get(receipt)
        return message_id is not None and self._newest.get(message_id) != receipt

    def message_id(self, receipt: str) -> str | None:
        """The message id a receipt was received with, if this process received it."""
        return self._message_of.get(receipt)

    def forget(self, receipt: str) -> None:
        """The message is gone (deleted): drop what was remembered of this receipt."""
        message_id = self._message_of.pop(receipt, None)
        if message_id is not None and self._newest.get(message_id) == receipt:
            del self._newest[message_id]


# Far above any worker's in-flight jobs; only receipts nobody settles ever reach it.
_MAX_KEPT = 10_000


class Kept(Generic[V]):
    """receipt -> what this process keeps of the message it leased until it is settled, oldest
    dropped first past a bound."""

    def __init__(self, limit: int = _MAX_KEPT) -> None:
        self._limit = limit
        self._items: OrderedDict[str, V] = OrderedDict()

    def keep(self, receipt: str, value: V) -> None:
        """Remember `value` for this receipt."""
        self._items[receipt] = value
        while len(self._items) > self._limit:
            self._items.popitem(last=False)

    def pop(self, receipt: str) -> V | None:
        """What was kept for this receipt, forgotten from now on (None if unknown)."""
        return self._items.pop(receipt, None)


# Quoted: the SQS stubs are there for type checking only.
DeleteBatch: TypeAlias = (
    "Callable[[list[DeleteMessageBatchRequestEntryTypeDef]], "
    "Awaitable[DeleteMessageBatchResultTypeDef]]"
)


@define
class _Pending:
    receipt: str
    done: anyio.Event = field(factory=anyio.Event)
    error: Exception | None = None


class AckBatcher:
    """Each ack waits for the flush that carries it; the first ack of a burst flushes."""

    def __init__(self, delete_batch: DeleteBatch, linger: float) -> None:
        self._delete_batch = delete_batch
        self._linger = linger
        self._pending: list[_Pending] = []
        self._flushing = False

    async def ack(self, receipt: str) -> None:
        """Delete the message of `receipt`; a stale receipt is ignored by SQS's answer."""
        await self.ack_many([receipt])

    async def ack_many(self, receipts: Sequence[str]) -> None:
        """Delete every message of `receipts`; raises the first error once all are settled."""
        entries = [_Pending(receipt) for receipt in receipts]
        if not entries:
            return
        self._pending.extend(entries)
        if not self._flushing:
            await self._flush()
        for entry in entries:
            await entry.done.wait()
        if errors := [entry.error for entry in entries if entry.error is not None]:
            raise errors[0]

    async def _flush(self) -> None:
        # Shielded: other acks wait on this flush, so it must not be abandoned halfway.
        self._flushing = True
        try:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(self._linger)
                while self._pending:
                    batch = self._pending[:BATCH_LIMIT]
                    del self._pending[:BATCH_LIMIT]
                    await self._send(batch)
        finally:
            self._flushing = False

    async def _send(self, batch: list[_Pending]) -> None:
        entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
            {"Id": str(n), "ReceiptHandle": p.receipt} for n, p in enumerate(batch)
        ]
        try:
            response = await self._delete_batch(entries)
        except Exception as exc:
            for pending in batch:
                pending.error = exc
                pending.done.set()
            return
        for failure in response.get("Failed", []):
            if failure.get("Code") not in STALE_RECEIPT_CODES:
                reason = f"{failure.get('Code')}: {failure.get('Message')}"
                batch[int(failure["Id"])].error = SqsUnavailable("DeleteMessageBatch", reason)
        for pending in batch:
            pending.done.set()


@frozen
class Answered:
    """The receipts of a DeleteMessageBatch by SQS's answer: `deleted`, `stale` (refused: no
    longer this lease's) and `refused` for another reason (the ack is retried)."""

    deleted: list[str]
    stale: list[str]
    refused: list[str]


def answered(
    entries: Sequence[tuple[str, str]], result: DeleteMessageBatchResultTypeDef
) -> Answered:
    """Sort the (Id, receipt) `entries` of one DeleteMessageBatch by its `result`."""
    receipts = dict(entries)
    failed = {f["Id"]: f.get("Code", "") for f in result.get("Failed", [])}
    stale = [receipts[i] for i, code in failed.items() if code in STALE_RECEIPT_CODES]
    refused = [receipts[i] for i, code in failed.items() if code not in STALE_RECEIPT_CODES]
    deleted = [receipt for i, receipt in entries if i not in failed]
    return Answered(deleted, stale, refused)


class LedgeredDeletes:
    """DeleteMessageBatch on one queue; the jobs it deleted end in the ledger (counted done)."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        queue: str,
        running: Kept[str],
        ledger: JobLedger | None,
    ) -> None:
        self._client = client
        self._queue_url = queue_url
        self._queue = queue
        self._running = running  # receipt -> id of a job the ledger marked running
        self._ledger = ledger

    async def __call__(
        self, entries: list[DeleteMessageBatchRequestEntryTypeDef]
    ) -> DeleteMessageBatchResultTypeDef:
        """Delete the entries' messages; end the deleted ones' jobs in the ledger."""
        result = await call(
            self._client.delete_message_batch, QueueUrl=self._queue_url, Entries=entries
        )
        sorted_out = answered([(e["Id"], e["ReceiptHandle"]) for e in entries], result)
        for receipt in sorted_out.stale:
            self._running.pop(receipt)
        done = [self._running.pop(receipt) for receipt in sorted_out.deleted]
        finished = [job_id for job_id in done if job_id is not None]
        if self._ledger is not None and finished:
            await self._ledger.finish(finished, queue=self._queue, failed=False)
        return result


async def extend_leases(
    client: SQSClient, queue_url: str, receipts: Sequence[str], seconds: int
) -> None:
    """Make every message of `receipts` invisible for `seconds` more.

    A stale receipt (the lease already lost) is skipped as SQS reports it; any other failure
    raises SqsUnavailable after every batch was tried, so one bad batch costs no other lease.
    """
    failures: list[str] = []
    for start in range(0, len(receipts), BATCH_LIMIT):
        entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
            {"Id": str(n), "ReceiptHandle": receipt, "VisibilityTimeout": seconds}
            for n, receipt in enumerate(receipts[start : start + BATCH_LIMIT])
        ]
        response = await call(
            client.change_message_visibility_batch, QueueUrl=queue_url, Entries=entries
        )
        failures += [
            f"{failure.get('Code')}: {failure.get('Message')}"
            for failure in response.get("Failed", [])
            if failure.get("Code") not in STALE_RECEIPT_CODES
        ]
    if failures:
        raise SqsUnavailable("ChangeMessageVisibilityBatch", failures[0])
