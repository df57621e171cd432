"""SqsQueue: the core Queue and JobSink ports on one Amazon SQS queue (boto3 in threads), and
what it keeps of its leases: the newest receipt per message, the bodies as received, the jobs
the ledger marked running. Settlement is in batch requests of ten: DeleteMessageBatch for acks,
ChangeMessageVisibilityBatch for retries, extensions and the hold before a dead-lettering.

With a job ledger (`skincare_sqs.ledger`, the database beside the outbox) it keeps the whole
queue contract: unique keys, cancel and delays past SQS's 15 minutes. Without one it is SQS
alone: delays of up to 15 minutes, no unique keys (a ValueError), and cancel finds nothing.

SQS (and moto) may still accept an older receipt of a message that was received again, so
the queue remembers the newest receipt per message id it saw and skips older ones.
Dead-lettering forwards a body exactly as SQS delivered it, never a re-encoding of the decoded
job: the DLQ keeps what the sender wrote, however the codec would have written it.
DeleteMessageBatch answers entry by entry: only a deleted entry is a finished job in the
ledger; one refused with a stale receipt is left to its redelivery, one refused otherwise
raises SqsUnavailable so that the ack is retried.
"""

from __future__ import annotations

import builtins
import logging
from collections import OrderedDict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Generic, TypeVar

import anyio
from attrs import frozen

from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.envelope import Envelope, due_at, refuse_priorities
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_core.jobs.steering import WATCH_EVERY, Pauses, PauseWatch
from skincare_sqs.caps import CAP_WAIT, Settles, hold_back
from skincare_sqs.client import (
    BATCH_LIMIT,
    MAX_DELAY,
    STALE_RECEIPT_CODES,
    Sender,
    SqsUnavailable,
    call,
    now,
)
from skincare_sqs.dead_letters import DeadLettering, SqsDeadLetters
from skincare_sqs.ledger import JobLedger, enqueue_through
from skincare_sqs.wire import (
    SqsMessage,
    carried,
    job_attributes,
    receive_count,
    sent_at,
    snooze_attributes,
    snooze_due,
    visibility_seconds,
)

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        BatchResultErrorEntryTypeDef,
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        DeleteMessageBatchRequestEntryTypeDef,
        DeleteMessageBatchResultTypeDef,
    )

logger = logging.getLogger(__name__)

V = TypeVar("V")


class SqsQueue:
    """A source queue and its DLQ (`dead_letters`, the operator's view of it). A receipt this
    process saw superseded is skipped, as is one SQS calls stale. Dead-lettering forwards the
    body as it was received, stamped with why and when.

    Under `caps` (which need the ledger) a received job starts only while every cap it falls
    under has room, every process's running jobs counted in the ledger's database, its slot
    held for `cap_lease` (the worker's visibility timeout) and extended with its lease; a job
    held back is sent again unrun (`skincare_sqs.caps`). A received batch no cap counts (no
    cap on the queue, none on its jobs' types) starts as without caps and pays nothing."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        dlq_url: str,
        wait_time_seconds: int = 20,
        dead_letter_hold: timedelta = timedelta(seconds=5),
        name: str = DEFAULT_QUEUE,
        ledger: JobLedger | None = None,
        pauses: Pauses | None = None,
        caps: ConcurrencyCaps = NO_CAPS,
        cap_lease: timedelta = timedelta(seconds=30),
    ) -> None:
        _check_long_poll(client, wait_time_seconds)
        self._capped = bool(caps.relevant_to(name))
        if self._capped and ledger is None:
            raise ValueError("SQS enforces concurrency caps through a job ledger: none given")
        self._caps = caps
        self._cap_lease = cap_lease
        self._settles = Settles()
        self.name = name
        self._client = client
        self._ledger = ledger
        self._sender = Sender(client, queue_url)
        self._queue_url = queue_url
        self._wait = wait_time_seconds
        self._hold = visibility_seconds(dead_letter_hold)
        self._leases = Leases()
        self._pauses = None if pauses is None else PauseWatch(pauses)
        self._bodies = Kept[str]()  # receipt -> body as received
        self._running = Kept[Message]()  # receipt -> a job the ledger marked running
        self._dead_lettering = DeadLettering(client, queue_url=queue_url, dlq_url=dlq_url)
        self._deletes = Deletes(
            client, queue_url=queue_url, queue=name, running=self._running, ledger=ledger
        )
        self.dead_letters = SqsDeadLetters(
            client,
            queue_url=queue_url,
            dlq_url=dlq_url,
            hold_seconds=self._hold,
            name=name,
            ledger=ledger,
        )

    async def enqueue(self, envelope: Envelope) -> bool:
        """Send the envelope's body, the job's id and type as attributes, hidden until it is due.

        With a ledger: False when a live job holds the unique key; a job due more than 15
        minutes from now waits in the ledger's outbox until the relay sends it. Without one: a
        delay of at most 15 minutes (DelaySeconds) and no key (ValueError before any request).
        """
        refuse_priorities([envelope])
        if self._ledger is not None:
            return await enqueue_through(self._ledger, self._sender, envelope)
        if envelope.unique_key is not None:
            raise ValueError("SQS cannot enforce a unique key without a job ledger")
        await self._sender.send(envelope, due_at(envelope, now()))
        return True

    async def cancel(self, job_id: str) -> bool:
        """Cancel a waiting or scheduled job of this queue; whether one was cancelled.

        Needs the ledger (without one: always False). A job still in the outbox is deleted; one
        already sent is marked cancelled and acked unrun when it is received. A running job
        (received, and not settled since) is not interrupted: False; so is one whose worker
        died, until it is acked, retried or dead.
        """
        if self._ledger is None:
            return False
        return await self._ledger.cancel(job_id, self.name)

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Send in SendMessageBatch calls of ten, each due time as DelaySeconds (capped at 15
        minutes). No ledger is consulted: this sends rows the relay claimed, whose keys the
        ledger already checked. Returns how many were sent. A priority is PriorityUnsupported."""
        refuse_priorities(envelopes)
        return await self._sender.send_many(envelopes)

    async def receive(self, max_messages: int = 1) -> builtins.list[Message]:
        """Long-poll up to min(max_messages, 10); bodies that are not jobs go to the DLQ.

        While this queue is paused nothing is received. A job received when its queue or type
        is paused (the pause came during the long poll) goes back to the ledger's outbox,
        deleted from SQS, and the relay sends it again once resumed: a held message never
        counts receives towards its redrive policy."""
        if self._pauses is not None and self.name in (await self._pauses.current()).queues:
            await anyio.sleep(min(self._wait, WATCH_EVERY))
            return []
        response = await call(
            self._client.receive_message,
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=max(1, min(max_messages, BATCH_LIMIT)),
            WaitTimeSeconds=self._wait,
            MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
            MessageAttributeNames=["All"],
        )
        accepted = [await self._accept(raw) for raw in response.get("Messages", [])]
        started = await self._start([message for message in accepted if message is not None])
        return await self._without_paused(started)

    async def _without_paused(self, messages: builtins.list[Message]) -> builtins.list[Message]:
        if self._pauses is None or not messages:
            return messages
        paused = await self._pauses.current()
        held = [m for m in messages if paused.holds(self.name, m.job.type)]
        if held:
            await self._park(held)
        return [m for m in messages if not paused.holds(self.name, m.job.type)]

    async def _park(self, held: builtins.list[Message]) -> None:
        jobs = []
        for message in held:
            self._running.pop(message.receipt)
            body = self._bodies.pop(message.receipt) or encode_job(message.job)
            jobs.append((message.job.id, body))
        parked = set() if self._ledger is None else await self._ledger.park(jobs)
        gone = [m.receipt for m in held if m.job.id in parked]
        await self._deletes(gone)
        for receipt in gone:
            self._leases.forget(receipt)
        # No row to wait in (no ledger, or a message sent around it): hidden for a while.
        kept = [(m.receipt, self._hold) for m in held if m.job.id not in parked]
        (await change_visibility(self._client, self._queue_url, kept)).raise_failure()

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """Delete the messages in DeleteMessageBatch calls of ten (stale receipts skipped)."""
        for message in messages:
            self._bodies.pop(message.receipt)
        receipts = [m.receipt for m in messages if not self._leases.is_stale(m.receipt)]
        try:
            await self._deletes(receipts)
        finally:
            self._settles.settled()
        for receipt in receipts:
            self._leases.forget(receipt)

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        """Make each message visible again after its delay (whole seconds, at most 12 h), in
        ChangeMessageVisibilityBatch calls of ten; stale receipts are skipped. A snooze is
        sent again as a new message instead (see `_snooze`)."""
        for snooze in [r for r in retries if r.snooze]:
            await self._snooze(snooze)
        retries = [r for r in retries if not r.snooze]
        for retry in retries:
            self._bodies.pop(retry.message.receipt)
            self._running.pop(retry.message.receipt)
        live = [r for r in retries if not self._leases.is_stale(r.message.receipt)]
        wanted = [(r.message.receipt, visibility_seconds(r.delay)) for r in live]
        answer = await change_visibility(self._client, self._queue_url, wanted)
        if self._ledger is not None:
            for retry in live:
                if retry.message.receipt in answer.changed:
                    await self._ledger.retry(retry.message.job.id, error=retry.error)
        self._settles.settled()
        answer.raise_failure()

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep the leases for another `visibility` from now, ten per request; under caps,
        their slots too."""
        seconds = visibility_seconds(visibility)
        wanted = [(m.receipt, seconds) for m in messages if not self._leases.is_stale(m.receipt)]
        answer = await change_visibility(self._client, self._queue_url, wanted)
        if self._capped and self._ledger is not None:
            running = [self._running.peek(receipt) for receipt in answer.changed]
            ids = [message.job.id for message in running if message is not None]
            await self._ledger.extend_caps(ids, visibility)
        answer.raise_failure()

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        """Send each body as received to the DLQ, stamped with its reason, then delete it.

        Each lease is held first (ChangeMessageVisibilityBatch): that proves its receipt live,
        so a stale one moves nothing. The moved jobs end in the ledger as failed.
        """
        live = [b for b in burials if not self._leases.is_stale(b.message.receipt)]
        held = await change_visibility(
            self._client, self._queue_url, [(b.message.receipt, self._hold) for b in live]
        )
        gone = {b.message.receipt for b in burials} - {b.message.receipt for b in live}
        for receipt in gone | held.stale:
            self._bodies.pop(receipt)
        dead: builtins.list[Burial] = []
        errors = []
        for burial in [b for b in live if b.message.receipt in held.changed]:
            try:
                if await self._bury(burial):
                    dead.append(burial)
            except SqsUnavailable as exc:
                errors.append(exc)
        if dead and self._ledger is not None:
            messages, reasons = [b.message for b in dead], [b.reason for b in dead]
            await self._ledger.finish(messages, queue=self.name, reasons=reasons)
        self._settles.settled()
        held.raise_failure(*errors)

    async def _bury(self, burial: Burial) -> bool:
        message = burial.message
        body = self._bodies.peek(message.receipt)
        if body is None:  # received by another SqsQueue: the job is all there is
            body = encode_job(message.job)
        moved = await self._dead_lettering.move(
            message.receipt,
            body,
            job_attributes(message.job),
            reason=burial.reason,
            attempts=message.attempts,
            message_id=self._leases.message_id(message.receipt) or "",
        )
        self._bodies.pop(message.receipt)
        self._running.pop(message.receipt)
        if moved:
            self._leases.forget(message.receipt)
        return moved

    async def _snooze(self, retry: Retry) -> None:
        """Send the job again as a new message due after the snooze, then delete this one.

        SQS counts every receive of a message (ApproximateReceiveCount, and the redrive
        policy's maxReceiveCount with it): a new message starts at none, and carries the
        attempts spent before and the snoozes in its attributes, so a snooze spends no attempt
        and never brings the redrive policy closer. A snooze past SQS's 15-minute delay hops:
        each receive before its end sends it on again, unrun. Sent before the delete: a failed
        delete leaves one duplicate delivery, never a lost job."""
        message = retry.message
        body = self._bodies.pop(message.receipt) or encode_job(message.job)
        self._running.pop(message.receipt)
        if self._leases.is_stale(message.receipt):
            return
        due = now() + retry.delay
        await self._send_on(body, message.job, message.attempts - 1, message.snoozes + 1, due)
        await self._delete_unfinished(message.receipt)
        if self._ledger is not None:
            await self._ledger.retry(message.job.id)

    async def _send_on(self, body: str, job: Job, spent: int, snoozes: int, due: datetime) -> None:
        wait = max(due - now(), timedelta(0))
        hop = due if wait > MAX_DELAY else None
        await call(
            self._client.send_message,
            QueueUrl=self._queue_url,
            MessageBody=body,
            MessageAttributes=snooze_attributes(job, spent=spent, snoozes=snoozes, due=hop),
            DelaySeconds=visibility_seconds(min(wait, MAX_DELAY)),
        )

    async def _delete_unfinished(self, receipt: str) -> None:
        # Not through Deletes: the job goes on, so its ledger row must not end.
        await call(self._client.delete_message, QueueUrl=self._queue_url, ReceiptHandle=receipt)
        self._leases.forget(receipt)

    async def _hop(self, raw: SqsMessage, job: Job) -> bool:
        """Send a message of a long snooze on, unrun, while its snooze lasts; whether it did."""
        due = snooze_due(raw)
        if due is None or due <= now():
            return False
        spent, snoozes = carried(raw)
        await self._send_on(raw["Body"], job, spent, snoozes, due)
        await self._delete_unfinished(raw["ReceiptHandle"])
        return True

    async def _accept(self, raw: SqsMessage) -> Message | None:
        spent, snoozes = carried(raw)
        receipt, attempts = raw["ReceiptHandle"], receive_count(raw) + spent
        self._leases.received(raw["MessageId"], receipt)
        try:
            job = decode_job(raw["Body"])
        except InvalidJob as exc:
            if await self._dead_lettering.reject(raw, str(exc)):
                self._leases.forget(receipt)
                if self._ledger is not None:
                    await self._ledger.count_dead(self.name, 1)
            return None
        if await self._hop(raw, job):
            return None
        self._bodies.keep(receipt, raw["Body"])
        return Message(receipt, job, attempts, enqueued_at=sent_at(raw), snoozes=snoozes)

    async def _start(self, messages: builtins.list[Message]) -> builtins.list[Message]:
        # One statement a batch: cancelled jobs and stray copies are acked unrun, the others
        # marked running.
        if self._ledger is None or not messages:
            return messages
        if self._capped and self._meet_a_cap(messages):
            return await self._start_capped(self._ledger, messages)
        unrun = await self._ledger.start([m.job.id for m in messages])
        return await self._started(messages, unrun)

    def _meet_a_cap(self, messages: builtins.list[Message]) -> bool:
        """Whether a cap counts any of these jobs: a batch no cap counts starts as without caps."""
        return any(self._caps.caps_of(self.name, m.job.type) for m in messages)

    async def _start_capped(
        self, ledger: JobLedger, messages: builtins.list[Message]
    ) -> builtins.list[Message]:
        # When every job was held back, the receive waits for a slot (at most CAP_WAIT) and
        # tries them once more before it sends them back: a slot this process frees is taken
        # without another receive.
        settled = self._settles.count
        started, held = await self._book(ledger, messages)
        if held and not started:
            await self._settles.wait(settled, CAP_WAIT)
            started, held = await self._book(ledger, held)
        if held:
            await self._hold_back(held)
        return started

    async def _book(
        self, ledger: JobLedger, messages: builtins.list[Message]
    ) -> tuple[builtins.list[Message], builtins.list[Message]]:
        # One transaction: (the jobs started, those held back); the unrun ones are acked. A job
        # received twice in one batch is booked once: its other copies wait, held back.
        first: dict[str, Message] = {}
        for message in messages:
            first.setdefault(message.job.id, message)
        copies = [m for m in messages if first[m.job.id] is not m]
        jobs = [(m.job.id, m.job.type) for m in first.values()]
        start = await ledger.start_capped(
            jobs, queue=self.name, caps=self._caps, lease=self._cap_lease
        )
        rest = [m for m in first.values() if m.job.id not in start.held_back]
        held = [m for m in first.values() if m.job.id in start.held_back]
        held += [m for m in copies if m.job.id not in start.unrun]
        rest += [m for m in copies if m.job.id in start.unrun]
        return await self._started(rest, start.unrun), held

    async def _hold_back(self, held: builtins.list[Message]) -> None:
        # At most ten: one receive's messages, one batch request each way.
        bodies = [(self._bodies.pop(m.receipt) or encode_job(m.job), m) for m in held]
        for receipt in await hold_back(self._client, self._queue_url, bodies):
            self._leases.forget(receipt)

    async def _started(
        self, messages: builtins.list[Message], unrun: AbstractSet[str]
    ) -> builtins.list[Message]:
        acked = [m.receipt for m in messages if m.job.id in unrun]
        for receipt in acked:
            self._bodies.pop(receipt)
        await self._deletes(acked)
        for message in messages:
            if message.job.id not in unrun:
                self._running.keep(message.receipt, message)
        return [m for m in messages if m.job.id not in unrun]


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

    def peek(self, receipt: str) -> V | None:
        """What is kept for this receipt (None if unknown), still kept."""
        return self._items.get(receipt)

    def pop(self, receipt: str) -> V | None:
        """What was kept for this receipt, forgotten from now on (None if unknown)."""
        return self._items.pop(receipt, None)


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


class Deletes:
    """DeleteMessageBatch on one queue, ten receipts a request; the jobs it deleted end in the
    ledger (counted done)."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        queue: str,
        running: Kept[Message],
        ledger: JobLedger | None,
    ) -> None:
        self._client = client
        self._queue_url = queue_url
        self._queue = queue
        self._running = running  # receipt -> a job the ledger marked running
        self._ledger = ledger

    async def __call__(self, receipts: Sequence[str]) -> None:
        """Delete the messages of `receipts`. Every request is tried; then the first error, if
        any, is raised (SqsUnavailable for an entry SQS refused other than as stale)."""
        errors: list[Exception] = []
        for start in range(0, len(receipts), BATCH_LIMIT):
            try:
                # Shielded: a message SQS deleted must end in the ledger too.
                with anyio.CancelScope(shield=True):
                    await self._delete(receipts[start : start + BATCH_LIMIT])
            except Exception as exc:  # raised once every batch was tried
                errors.append(exc)
        if errors:
            raise errors[0]

    async def _delete(self, receipts: Sequence[str]) -> None:
        entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
            {"Id": str(n), "ReceiptHandle": receipt} for n, receipt in enumerate(receipts)
        ]
        result = await call(
            self._client.delete_message_batch, QueueUrl=self._queue_url, Entries=entries
        )
        sorted_out = answered([(e["Id"], e["ReceiptHandle"]) for e in entries], result)
        for receipt in sorted_out.stale:
            self._running.pop(receipt)
        done = [self._running.pop(receipt) for receipt in sorted_out.deleted]
        finished = [message for message in done if message is not None]
        if self._ledger is not None and finished:
            await self._ledger.finish(finished, queue=self._queue)
        if refusals := _refusals(result.get("Failed", [])):
            raise SqsUnavailable("DeleteMessageBatch", refusals[0])


@frozen
class Changed:
    """What ChangeMessageVisibilityBatch did with a list of receipts: the leases it `changed`,
    those it called `stale`, and the `failures` (refused entries, failed requests)."""

    changed: frozenset[str]
    stale: frozenset[str]
    failures: tuple[SqsUnavailable, ...]

    def raise_failure(self, *more: SqsUnavailable) -> None:
        """Raise the first failure of this change, or else of `more`."""
        if failures := [*self.failures, *more]:
            raise failures[0]


async def change_visibility(
    client: SQSClient, queue_url: str, wanted: Sequence[tuple[str, int]]
) -> Changed:
    """Make the message of each (receipt, seconds) invisible for that long from now, ten per
    request; every request is tried, whatever another's answer."""
    answers = [
        await _change_batch(client, queue_url, wanted[start : start + BATCH_LIMIT])
        for start in range(0, len(wanted), BATCH_LIMIT)
    ]
    return Changed(
        frozenset().union(*(a.changed for a in answers)),
        frozenset().union(*(a.stale for a in answers)),
        tuple(failure for a in answers for failure in a.failures),
    )


async def _change_batch(
    client: SQSClient, queue_url: str, chunk: Sequence[tuple[str, int]]
) -> Changed:
    entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
        {"Id": str(n), "ReceiptHandle": receipt, "VisibilityTimeout": seconds}
        for n, (receipt, seconds) in enumerate(chunk)
    ]
    try:
        response = await call(
            client.change_message_visibility_batch, QueueUrl=queue_url, Entries=entries
        )
    except SqsUnavailable as exc:
        return Changed(frozenset(), frozenset(), (exc,))
    failed = {f["Id"]: f.get("Code", "") for f in response.get("Failed", [])}
    stale = {chunk[int(i)][0] for i, code in failed.items() if code in STALE_RECEIPT_CODES}
    changed = {receipt for n, (receipt, _) in enumerate(chunk) if str(n) not in failed}
    refusals = _refusals(response.get("Failed", []))
    failures = tuple(SqsUnavailable("ChangeMessageVisibilityBatch", r) for r in refusals)
    return Changed(frozenset(changed), frozenset(stale), failures)


def _refusals(failed: Sequence[BatchResultErrorEntryTypeDef]) -> builtins.list[str]:
    # A stale receipt is no failure: the lease is gone, and the message comes back or is
    # another consumer's.
    stale = [f for f in failed if f.get("Code") in STALE_RECEIPT_CODES]
    if stale:
        logger.info("sqs.stale_receipt", extra={"count": len(stale), "code": stale[0].get("Code")})
    return [
        f"{f.get('Code')}: {f.get('Message')}"
        for f in failed
        if f.get("Code") not in STALE_RECEIPT_CODES
    ]
