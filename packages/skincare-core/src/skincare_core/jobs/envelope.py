"""Enqueueing, checked once: an `Envelope` that exists is a valid job addressed to a named queue,
and `enqueue` and `RoutedOutbox` build one before any adapter is called."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from attrs import evolve, field, frozen

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.errors import PriorityUnsupported
from skincare_core.jobs.job import Job
from skincare_core.jobs.priority import DEFAULT_PRIORITY, check_priority
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes, check_queue_name
from skincare_core.jobs.tracing import HeaderSource

if TYPE_CHECKING:
    from skincare_core.jobs.ports import Queue


def _aware(_: object, __: object, value: datetime | None) -> None:
    if value is not None and value.utcoffset() is None:
        raise ValueError("not_before must be timezone-aware")


def _frozen_headers(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


def _unique_key(_: object, __: object, value: str | None) -> None:
    check_unique_key(value)


@frozen
class Envelope:
    """A valid job addressed to a named queue: due after `delay` (by the queue's clock) or at
    `not_before` (aware; neither: now), unique while live under `unique_key` if one is given.

    Construction checks everything an adapter relies on: the queue name, the schedule (at most
    one of a non-negative delay and an aware time), a non-empty unique key, and the encoded
    size (`JobTooLarge`). `body` is the job encoded once, the bytes an adapter stores or sends.
    `headers` are reserved for trace context. `priority` orders the job inside its queue:
    1 is the most urgent, 4 the least (`skincare_core.jobs.priority`).
    """

    job: Job
    queue: str = field(default=DEFAULT_QUEUE, validator=lambda _s, _a, v: check_queue_name(v))
    not_before: datetime | None = field(default=None, validator=_aware)
    unique_key: str | None = field(default=None, validator=_unique_key)
    headers: Mapping[str, str] = field(factory=dict, converter=_frozen_headers)
    delay: timedelta | None = field(default=None, kw_only=True)
    priority: int = field(
        default=DEFAULT_PRIORITY, kw_only=True, validator=lambda _s, _a, v: check_priority(v)
    )
    body: str = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        check_schedule(self.delay, self.not_before)
        object.__setattr__(self, "body", encode_job(self.job))


def check_schedule(delay: timedelta | None, not_before: datetime | None) -> None:
    """ValueError unless at most one of `delay` (not negative) and `not_before` (aware) is given."""
    if delay is not None and not_before is not None:
        raise ValueError("give a delay or a not_before time, not both")
    if delay is not None and delay < timedelta(0):
        raise ValueError(f"a delay cannot be negative, got {delay}")
    _aware(None, None, not_before)


def due_at(envelope: Envelope, now: datetime) -> datetime | None:
    """When `envelope`, enqueued at `now`, is due; None for at once."""
    if envelope.delay is not None:
        return now + envelope.delay
    return envelope.not_before


def check_unique_key(unique_key: str | None) -> None:
    """ValueError for an empty unique key (None means none)."""
    if unique_key is not None and not unique_key:
        raise ValueError("a unique key must be a non-empty string (or None for none)")


async def enqueue(
    queue: Queue,
    job: Job | Envelope,
    *,
    delay: timedelta | None = None,
    not_before: datetime | None = None,
    unique_key: str | None = None,
    priority: int = DEFAULT_PRIORITY,
) -> bool:
    """Add `job` to `queue`, visible after `delay` or from `not_before` (aware; neither: now).

    Passing both is a ValueError; JobTooLarge is raised before anything is sent. With a
    `unique_key`, nothing is added while a job with that key is ready, scheduled or running
    on the queue's backend (any of its queues): returns whether the job was added. `priority`
    (1 most urgent .. 4) orders it among the queue's due jobs; a backend without an order
    inside a queue raises `PriorityUnsupported` for any but the default.

    An `Envelope` (a typed job, `JobDefinition.job(...)`) carries its own schedule, key and
    priority, and must name this queue: passing options with it, or another queue, is a
    ValueError.
    """
    if isinstance(job, Envelope):
        _check_whole(job, queue.name, delay, not_before, unique_key, priority)
        return await queue.enqueue(job)
    envelope = Envelope(job, queue.name, not_before, unique_key, delay=delay, priority=priority)
    return await queue.enqueue(envelope)


def _check_whole(
    envelope: Envelope,
    queue: str | None,
    delay: timedelta | None,
    not_before: datetime | None,
    unique_key: str | None,
    priority: int | None,
) -> None:
    given = (delay, not_before, unique_key, None if priority == DEFAULT_PRIORITY else priority)
    if any(option is not None for option in given):
        raise ValueError("an envelope carries its schedule and key: give them to .job(...)")
    if queue is not None and envelope.queue != queue:
        raise ValueError(
            f"job {envelope.job.type!r} goes to queue {envelope.queue!r}, not {queue!r}"
        )


class OutboxWriter(Protocol):
    """Where an outbox writes its envelopes: inside the caller's open transaction."""

    async def write(self, envelope: Envelope) -> bool:
        """Store `envelope` so it commits or rolls back with the transaction; False (nothing
        stored) while a live job, or one written earlier in this transaction, holds its key."""


class RoutedOutbox:
    """The `Outbox` of a unit of work: each job to the queue its type is routed to, stamped with
    the current trace context, checked as an `Envelope` before the writer sees it."""

    def __init__(
        self, writer: OutboxWriter, routes: QueueRoutes, job_headers: HeaderSource | None = None
    ) -> None:
        self._writer = writer
        self._routes = routes
        self._job_headers = job_headers

    async def add(
        self,
        job: Job | Envelope,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
        priority: int | None = None,
    ) -> bool:
        """Queue `job` if, and only if, the transaction commits; False if a live job holds
        `unique_key`. JobTooLarge and ValueError at once, before the writer is called.
        `priority` (None: the one the routes give its type) orders it inside its queue. An
        `Envelope` (a typed job) goes to its own queue with its own schedule, key and priority."""
        if isinstance(job, Envelope):
            _check_whole(job, None, delay, not_before, unique_key, priority)
            stamped = self._stamped(job.job)
            envelope = job if stamped is job.job else evolve(job, job=stamped)
        else:
            queue = self._routes.queue_of(job.type)
            if priority is None:
                priority = self._routes.priority_of(job.type)
            envelope = Envelope(
                self._stamped(job), queue, not_before, unique_key, delay=delay, priority=priority
            )
        return await self._writer.write(envelope)

    def _stamped(self, job: Job) -> Job:
        """`job` with the current trace context in its headers."""
        if self._job_headers is None or not (headers := self._job_headers()):
            return job
        return evolve(job, headers={**headers, **job.headers})


def refuse_priorities(envelopes: Iterable[Envelope]) -> None:
    """PriorityUnsupported, before anything is written or sent, for an envelope with a priority
    other than the default: for a backend whose queues have no order among their jobs (SQS)."""
    for envelope in envelopes:
        if envelope.priority != DEFAULT_PRIORITY:
            raise PriorityUnsupported(envelope.queue, envelope.priority)
