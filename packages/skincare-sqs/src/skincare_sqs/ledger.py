"""The port of the database the SQS backend keeps its jobs' rows in (`JobLedger`).

SQS cannot keep a key unique, remove a message before handing it out, or delay one past 15
minutes. So each job has a row from the enqueue until it ends, in the database that holds the
outbox (skincare-postgres implements this as `PostgresJobLedger`):

- a job due within 15 minutes is added, sent with DelaySeconds, and marked `sent`; one due later
  waits in the outbox and the relay sends it once it is due within 15 minutes;
- a unique key is held by the row while the job waits, is scheduled or runs (received), until
  it is acked or dead: a key is free again only when its job has ended, as on every backend;
- receiving marks the rows `running`; a job cancelled after it was sent is acked unrun, as is a
  stray copy of a job whose row says it is not in SQS (dead, or waiting in the outbox);
- under concurrency caps, receiving starts only the jobs the caps have room for, every
  process's running jobs counted in the database, each slot leased until the worker's
  heartbeat stops (`start_capped`, `extend_caps`); the others are held back, their rows `sent`;
- cancel deletes an unsent row, or turns a sent (not running) one into a tombstone;
- a job's end (acked: done; dead-lettered: failed) is counted per named queue and minute in the
  statement that drops its row, and read back as the backend's `JobOutcomes`; a received body
  that is no job (no row) is counted failed when it is moved to the DLQ;
- where the ledger keeps a history, each retry notes its attempt's error and each end writes
  the job's timeline (the backend's `JobHistory` reads it).

It is a port of this adapter, not of the engine: only the SQS backend needs it.

The backend's sink and the relay's view of the outbox both send to the named queues' SQS
queues, but a relay's job already has its ledger row (its key was checked when it was added),
while any other caller's job needs one first. The outbox view remembers which jobs the relay
claimed, so the sink sends those as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import anyio

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.envelope import Envelope, due_at, refuse_priorities
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.outcomes import JobOutcomes
from skincare_core.jobs.ports import DeadLetters, OutboxStorage
from skincare_core.jobs.steering import JobState, JobView
from skincare_sqs.client import Sender, due_beyond_delay, now


class JobLedger(OutboxStorage, JobOutcomes, Protocol):
    """The outbox rows the relay sends, kept as the jobs' ledger until each job ends, and the
    count of the jobs that ended."""

    async def add(self, envelope: Envelope, *, due: datetime | None, send_now: bool) -> str | None:
        """Store the job's row, due at `due` (None: now), unless a live job holds its key
        (None); with `send_now` leased to the caller, who sends
        it and passes the receipt to `mark_sent` or `forget`."""

    async def forget(self, receipt: str) -> None:
        """The caller could not send the job it added: drop the row."""

    async def start(self, job_ids: Sequence[str]) -> set[str]:
        """Received jobs are running; returns those to ack unrun: the cancelled ones, and stray
        copies of jobs the ledger holds as not in SQS (dead, or waiting in the outbox)."""

    async def start_capped(
        self,
        jobs: Sequence[tuple[str, str]],
        *,
        queue: str,
        caps: ConcurrencyCaps,
        lease: timedelta,
    ) -> CappedStart:
        """Received (id, type) jobs of `queue` run while every cap each falls under has room,
        every process's running jobs counted, each slot held for `lease` unless extended; the
        others are held back, not started, as is a second delivery of a job that runs. Cancelled
        ones and stray copies are reported (ack them unrun)."""

    async def extend_caps(self, job_ids: Sequence[str], lease: timedelta) -> None:
        """These capped running jobs keep their slots for `lease` from now."""

    async def retry(self, job_id: str, *, error: str | None = None) -> None:
        """A received job waits in SQS again (a retry): its attempt failed with `error`."""

    async def finish(
        self, ended: Sequence[Message], *, queue: str, reasons: Sequence[str] | None = None
    ) -> None:
        """These received jobs of `queue` were acked (or, with their `reasons`, went dead):
        their rows and keys go, they count as done (or failed), and the history (where kept)
        records their ends with their deliveries, in one statement."""

    async def count_dead(self, queue: str, count: int) -> None:
        """`count` messages of `queue` that were no job (no row) went to the DLQ: counted
        failed."""

    async def cancel(self, job_id: str, queue: str) -> bool:
        """Cancel an unsent, waiting or scheduled job of `queue`; whether one was cancelled."""

    async def resent(self, jobs: Sequence[tuple[str, str, str]]) -> None:
        """These (id, type, queue) jobs were sent back from the dead letters, without keys."""

    async def find(self, job_id: str) -> LedgerEntry | None:
        """The live job's row (waiting, sent or running); None when there is none."""

    async def run_now(self, job_id: str) -> bool:
        """Make an unsent job due later due now (the relay sends it); whether it was one."""

    async def park(self, jobs: Sequence[tuple[str, str]]) -> set[str]:
        """These received (id, body) jobs of a paused queue or type wait unsent again, and the
        relay sends them once resumed; the ids that had a row."""


class CappedStart(Protocol):
    """What a capped start did with the received jobs; every job in neither set runs."""

    @property
    def unrun(self) -> frozenset[str]:
        """The ids to ack unrun: cancelled jobs, and stray copies of jobs the ledger holds as
        not in SQS (dead, or waiting in the outbox)."""

    @property
    def held_back(self) -> frozenset[str]:
        """The ids of the jobs a full cap holds back, and second deliveries of jobs that run:
        not started, to be received again."""


class LedgerEntry(Protocol):
    """A live job's ledger row as an operator sees it; `body` is '' once the job was sent."""

    @property
    def id(self) -> str:
        """The job's id."""

    @property
    def type(self) -> str:
        """The job's type."""

    @property
    def body(self) -> str:
        """The encoded job while it waits unsent; '' after."""

    @property
    def queue(self) -> str:
        """The named queue."""

    @property
    def due_at(self) -> datetime:
        """When it is (or was) due."""

    @property
    def state(self) -> JobState:
        """Where it stands (`queued` once in SQS)."""


async def enqueue_through(ledger: JobLedger, sender: Sender, envelope: Envelope) -> bool:
    """Add the job's row and, when it is due within 15 minutes, send it now (the relay sends a
    later one when it is due); False when a live job holds its key. A failed send drops the row
    again: the job was not enqueued."""
    due = due_at(envelope, now())
    if due_beyond_delay(due):
        return await ledger.add(envelope, due=due, send_now=False) is not None
    receipt = await ledger.add(envelope, due=due, send_now=True)
    if receipt is None:
        return False
    try:
        await sender.send(envelope, due)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await ledger.forget(receipt)
        raise
    await ledger.mark_sent([receipt])
    return True


class RelayedOutbox:
    """The ledger's OutboxStorage, noting the ids of the jobs claimed until they are settled."""

    def __init__(self, ledger: JobLedger) -> None:
        self._ledger = ledger
        self._claimed: dict[str, str] = {}  # handle -> job id

    def claimed(self, job_id: str) -> bool:
        """Whether the relay claimed this job and has not settled it yet."""
        return job_id in self._claimed.values()

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` due rows, as the ledger does."""
        rows = await self._ledger.claim(limit)
        self._claimed |= {handle: envelope.job.id for handle, envelope in rows}
        return rows

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """These jobs are in SQS."""
        await self._ledger.mark_sent(handles)
        self._settle(handles)

    async def release(self, handles: Sequence[str]) -> None:
        """These jobs were not sent: claimable again at once."""
        try:
            await self._ledger.release(handles)
        finally:
            self._settle(handles)

    def _settle(self, handles: Sequence[str]) -> None:
        for handle in handles:
            self._claimed.pop(handle, None)


class SqsSink:
    """JobSink over each named queue's SQS queue: a relayed job is sent as it is; any other gets
    its ledger row first (its key checked, a far due time left to the relay)."""

    def __init__(
        self, senders: Mapping[str, Sender], *, ledger: JobLedger, outbox: RelayedOutbox
    ) -> None:
        self._senders = dict(senders)
        self._ledger = ledger
        self._outbox = outbox

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Each envelope to its queue; how many were added. A queue without an SQS queue is a
        ValueError before anything is sent; so is a priority (PriorityUnsupported)."""
        refuse_priorities(envelopes)
        for envelope in envelopes:
            self._sender(envelope.queue)
        relayed = [e for e in envelopes if self._outbox.claimed(e.job.id)]
        added = 0
        for queue in dict.fromkeys(e.queue for e in relayed):
            added += await self._sender(queue).send_many([e for e in relayed if e.queue == queue])
        for envelope in envelopes:
            if not self._outbox.claimed(envelope.job.id):
                sender = self._sender(envelope.queue)
                added += await enqueue_through(self._ledger, sender, envelope)
        return added

    def _sender(self, queue: str) -> Sender:
        try:
            return self._senders[queue]
        except KeyError:
            known = ", ".join(self._senders)
            raise ValueError(f"no SQS queue for the named queue {queue!r} (has: {known})") from None


class SqsJobActions:
    """JobActions through the ledger: a job not sent yet runs now (the relay sends it at once)
    or is cancelled (its row goes); one already in SQS can only be cancelled (a tombstone its
    worker acks unrun), as SQS cannot move a message's delay. A dead job is found in the DLQs.
    """

    def __init__(self, ledger: JobLedger, dead_letters: DeadLetters) -> None:
        self._ledger = ledger
        self._dead = dead_letters

    async def find(self, job_id: str) -> JobView | None:
        """The job as its ledger row (or its dead letter) has it; a sent job's payload is no
        longer kept (its view holds the id and type only)."""
        row = await self._ledger.find(job_id)
        if row is None:
            dead = await self._dead.get(job_id)
            if dead is None:
                return None
            return JobView(dead.job, dead.queue, "dead", dead.attempts, None)
        return JobView(_job_of(row), row.queue, row.state, 0, row.due_at)

    async def run_now(self, job_id: str) -> bool:
        """Make an unsent job due now; False for one in SQS already (or none)."""
        return await self._ledger.run_now(job_id)

    async def cancel(self, job_id: str) -> bool:
        """Cancel the job if it waits, sent or not; a running one is left to finish."""
        row = await self._ledger.find(job_id)
        return row is not None and await self._ledger.cancel(job_id, row.queue)


def _job_of(row: LedgerEntry) -> Job:
    if row.body:
        try:
            return decode_job(row.body)
        except InvalidJob:
            pass
    return Job(id=row.id, type=row.type)
