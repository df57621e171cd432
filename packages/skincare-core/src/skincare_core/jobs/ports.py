"""Ports of the job engine: the worker's `Queue`, the operator's `DeadLetters` and `QueueStats`,
the relay's `JobSink` and `OutboxStorage`. Adapters implement them; the engine calls them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from attrs import frozen

from skincare_core.jobs.job import Job, Message


class Queue(Protocol):
    """At-least-once delivery with leases. A stale receipt never touches a newer lease."""

    async def enqueue(self, job: Job) -> None:
        """Make the job available now; JobTooLarge is raised before anything is sent."""

    async def receive(self, max_messages: int = 1) -> list[Message]:
        """Lease up to `max_messages` jobs, waiting up to the adapter's poll; [] when none came."""

    async def ack(self, message: Message) -> None:
        """The job is done: remove it."""

    async def nack(self, message: Message, delay: timedelta) -> None:
        """The job failed: make it visible again after `delay`."""

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Move the job to the dead letters with `reason`; it is not delivered again."""

    async def extend(self, message: Message, visibility: timedelta) -> None:
        """Keep the lease for another `visibility` from now (a long job's heartbeat)."""


class JobSink(Protocol):
    """Where the outbox relay sends committed jobs, many at a time."""

    async def enqueue_many(self, jobs: Sequence[Job]) -> None:
        """Enqueue every job; on error some may have been sent (handlers are idempotent)."""


@frozen
class DeadLetter:
    """A dead job, with why and when it died."""

    job: Job
    attempts: int
    error: str
    dead_at: datetime


class DeadLetters(Protocol):
    """Operations on dead jobs: inspect, redrive back to the queue, purge."""

    async def count(self) -> int:
        """How many jobs are dead."""

    async def list(self, *, job_type: str | None = None, limit: int = 100) -> list[DeadLetter]:
        """Dead jobs, oldest first, optionally of one type."""

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id; None if no job of that id is dead."""

    async def redrive(self, job_id: str) -> bool:
        """Send one dead job back with attempts reset; False if no such dead job."""

    async def redrive_all(self, *, job_type: str | None = None) -> int:
        """Send every dead job (of one type) back; returns how many."""

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

    async def stats(self) -> QueueCounts:
        """The counts now; cheap enough to call every few seconds, never changes the queue."""


class Outbox(Protocol):
    """Jobs written in the same transaction as the business change that causes them."""

    async def add(self, job: Job) -> None:
        """Queue `job` if, and only if, this unit of work commits."""


class OutboxStorage(Protocol):
    """Committed outbox jobs waiting for the relay: claimed with a lease, deleted once sent."""

    async def claim(self, limit: int) -> Sequence[tuple[str, Job]]:
        """Lease up to `limit` unsent jobs as (handle, job); [] when none wait."""

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """These jobs reached the queue."""

    async def release(self, handles: Sequence[str]) -> None:
        """These claimed jobs were not sent: claimable again at once, not after their lease."""
