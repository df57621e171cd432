"""Job errors: what a handler raises to steer the worker, and what the codec refuses."""

from __future__ import annotations

from datetime import timedelta


class PermanentJobError(Exception):
    """A job that can never succeed: dead-letter it at once, do not retry."""


class RetryLater(Exception):
    """Retry after exactly `delay` (a provider's Retry-After) instead of the backoff."""

    def __init__(self, delay: timedelta, reason: str = "retry later") -> None:
        super().__init__(reason)
        self.delay = delay


class Snooze(Exception):
    """Run this job again after `delay` without spending an attempt: not a failure (a provider's
    "try again in 10 minutes"). A job may snooze at most the worker's `max_snoozes` times; the
    next snooze dead-letters it, saying so."""

    def __init__(self, delay: timedelta, reason: str = "snoozed") -> None:
        if delay < timedelta(0):
            raise ValueError(f"a snooze cannot be negative, got {delay}")
        super().__init__(reason)
        self.delay = delay


class InvalidJob(PermanentJobError):
    """A job body or payload that cannot be understood."""


class UnknownJobType(PermanentJobError):
    """No handler is registered for this job type."""

    def __init__(self, job_type: str) -> None:
        super().__init__(f"no handler registered for job type {job_type!r}")
        self.job_type = job_type


class Unavailable(Exception):
    """A backing service (database, queue) is unreachable or did not answer in time.

    Adapters raise a subclass; callers at the edge answer "try again later" (HTTP 503), and
    whatever was in flight was not done, so an idempotent retry is safe.
    """


class JobTooLarge(ValueError):
    """An encoded job over the 256 KiB limit; refused before it reaches any queue."""

    def __init__(self, job_id: str, size: int) -> None:
        super().__init__(f"job {job_id} encodes to {size} bytes, over the 262144-byte limit")
        self.job_id = job_id
        self.size = size


class PriorityUnsupported(ValueError):
    """A job enqueued with a priority on a backend that has no order inside a queue (SQS)."""

    def __init__(self, queue: str, priority: int) -> None:
        super().__init__(
            f"queue {queue!r} cannot order jobs by priority (got priority {priority}):"
            " enqueue it without one, or route it to a named queue of its own"
        )
        self.queue = queue
        self.priority = priority
