"""Ports of the job engine: the worker's `Queue`, the operator's `DeadLetters` and `QueueStats`,
the relay's `JobSink` and `OutboxStorage`. Adapters implement them; the engine calls them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol, TypeAlias

from attrs import field, frozen

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_core.jobs.schedule import Schedule


class Queue(Protocol):
    """One named queue: at-least-once delivery with leases. A stale receipt never touches a
    newer lease. A job is *ready* (visible now), *scheduled* (visible later: a delay or a retry's
    backoff) or *running* (leased), until it is acked, dead or cancelled."""

    @property
    def name(self) -> str:
        """The queue's name (`default`, `critical`, ...)."""

    async def enqueue(self, envelope: Envelope) -> bool:
        """Add the envelope's job to this queue (`envelope.queue` is this queue's name; the
        caller, `skincare_core.jobs.enqueue`, has checked everything else). Visible after
        `envelope.delay` by the queue's clock, or from `envelope.not_before`. With a
        `unique_key`, nothing is added while a job with that key is ready, scheduled or running
        on this backend (any of its queues): returns whether the job was added.
        """

    async def cancel(self, job_id: str) -> bool:
        """Remove a ready or scheduled job of this queue; whether one was removed.

        A running job is not interrupted: cancel returns False and the job finishes (or fails)
        as it would have. Dead jobs are the dead letters' business.
        """

    async def receive(self, max_messages: int = 1) -> list[Message]:
        """Lease up to `max_messages` jobs, waiting up to the adapter's poll; [] when none came."""

    # Settlement: every method takes a batch, in as few requests as the queue allows. A
    # message whose lease is no longer the one its receipt names is skipped, so a whole batch
    # may be sent again after `Unavailable` without touching a newer lease.

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """These jobs are done: remove them."""

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        """These jobs failed: make each visible again after its delay."""

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        """Move these jobs to the dead letters with their reasons; never delivered again."""

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep each live lease for another `visibility` from now (long jobs' heartbeat)."""


@frozen
class Retry:
    """A failed job to make visible again after `delay`. A `snooze` (the handler raised
    `Snooze`) spends no attempt: the queue takes back the attempt its receive counted and
    counts a snooze instead (`Message.snoozes` on the next delivery). `error` is why its
    attempt failed (the job's history keeps it; None: not told). Two retries of the same
    message and delay are equal whatever their errors: the error changes nothing the queue
    does."""

    message: Message
    delay: timedelta
    error: str | None = field(default=None, eq=False)
    snooze: bool = False


@frozen
class Burial:
    """A job to move to the dead letters, and why it died."""

    message: Message
    reason: str


Settlement: TypeAlias = Message | Retry | Burial
"""What becomes of a job that ran: acked (its `Message`), retried, or dead-lettered."""


class JobSink(Protocol):
    """Where the outbox relay sends committed jobs, many at a time, each to its named queue."""

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Enqueue every envelope on its queue, honouring `not_before` and `unique_key`; how many
        were added. On error some may have been sent (handlers are idempotent)."""


@frozen
class DeadLetter:
    """A dead job, with why and when it died, and the queue it died in."""

    job: Job
    attempts: int
    error: str
    dead_at: datetime
    queue: str = DEFAULT_QUEUE


class DeadLetters(Protocol):
    """Operations on dead jobs of every named queue: inspect, redrive, purge."""

    async def count(self, *, queue: str | None = None) -> int:
        """How many jobs are dead (in one queue)."""

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> list[DeadLetter]:
        """Dead jobs, oldest first, optionally of one type and of one queue."""

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id; None if no job of that id is dead."""

    async def redrive(self, job_id: str) -> bool:
        """Send one dead job back to the queue it died in, attempts reset; False if none."""

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Send every dead job (of one type, of one queue) back; returns how many."""

    async def purge(self) -> int:
        """Delete every dead job; returns how many."""


@frozen
class QueueCounts:
    """A queue's depth at one moment (approximate on SQS).

    `ready` jobs can be received now, `scheduled` ones wait for a delay (a retry's backoff),
    `leased` ones are being worked on, `dead` ones are in the dead letters. `oldest_ready_age`
    is how long the oldest ready job has waited: None if none is ready, or if the backend
    cannot tell (SQS reports that age only to CloudWatch).
    """

    ready: int
    scheduled: int
    leased: int
    dead: int
    oldest_ready_age: timedelta | None


class QueueStats(Protocol):
    """A read-only view of a queue's depth, for operators, alarms and metrics."""

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """The counts now, of every queue or of the named `queue` (all zero when it is not
        one of them); cheap enough to call every few seconds, never changes the queue."""


class Outbox(Protocol):
    """Jobs written in the same transaction as the business change that causes them."""

    async def add(
        self,
        job: Job | Envelope,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
        priority: int | None = None,
    ) -> bool:
        """Queue `job` if, and only if, this unit of work commits, on the queue its type is
        routed to; delay, not_before and unique_key as `Queue.enqueue` (False: not added);
        `priority` as `enqueue`'s (None: the priority its type is routed with). A typed job's
        `Envelope` (`JobDefinition.job`) brings its own queue, schedule, key and priority."""


class OutboxStorage(Protocol):
    """Committed outbox jobs waiting for the relay: claimed with a lease, deleted once sent."""

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` unsent envelopes as (handle, envelope); [] when none wait."""

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """These jobs reached the queue."""

    async def release(self, handles: Sequence[str]) -> None:
        """These claimed jobs were not sent: claimable again at once, not after their lease."""


@frozen
class ScheduleRecord:
    """A schedule as its store holds it: its rule (so any process can tell its next run) and
    the last tick enqueued."""

    name: str
    cron: str
    timezone: str
    job_type: str
    last_tick: datetime


class ScheduleStore(Protocol):
    """The last tick of every periodic schedule, where every scheduler process sees it."""

    async def begin(self, schedule: Schedule, tick: datetime) -> None:
        """Store the schedule's rule; record `tick` as its last run if it has none yet: a new
        schedule starts at its next tick rather than catching up on one it never had."""

    async def claim(self, schedule: str, tick: datetime, envelope: Envelope) -> bool:
        """If `tick` is later than the schedule's last run, record it and enqueue `envelope`;
        whether this call did. Of any number of concurrent callers, one gets True per tick.
        Where the backend can, the record and the enqueue commit together."""

    async def records(self) -> Sequence[ScheduleRecord]:
        """Every stored schedule, by name."""


class RateLimiter(Protocol):
    """Starts per second under a key (a named queue), counted where every worker sees them."""

    async def acquire(self, key: str, wanted: int, per_second: int) -> int:
        """Take up to `wanted` of the current second's `per_second` starts for `key`; how many
        were granted (0: this second's are used up)."""
