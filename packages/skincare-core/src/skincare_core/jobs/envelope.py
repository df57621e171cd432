"""An envelope: a job with where and when to run it, as the outbox stores it and a sink takes it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from attrs import field, frozen

from skincare_core.jobs.job import Job
from skincare_core.jobs.routing import DEFAULT_QUEUE, check_queue_name


def _aware(_: object, __: object, value: datetime | None) -> None:
    if value is not None and value.utcoffset() is None:
        raise ValueError("not_before must be timezone-aware")


def _frozen_headers(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@frozen
class Envelope:
    """A job addressed to a named queue, due at `not_before` (None: now), unique while live
    under `unique_key` if one is given. `headers` are reserved for trace context."""

    job: Job
    queue: str = field(default=DEFAULT_QUEUE, validator=lambda _s, _a, v: check_queue_name(v))
    not_before: datetime | None = field(default=None, validator=_aware)
    unique_key: str | None = field(default=None, validator=lambda _s, _a, v: check_unique_key(v))
    headers: Mapping[str, str] = field(factory=dict, converter=_frozen_headers)


def check_schedule(delay: timedelta | None, not_before: datetime | None) -> None:
    """ValueError unless at most one of `delay` (not negative) and `not_before` (aware) is given."""
    if delay is not None and not_before is not None:
        raise ValueError("give a delay or a not_before time, not both")
    if delay is not None and delay < timedelta(0):
        raise ValueError(f"a delay cannot be negative, got {delay}")
    _aware(None, None, not_before)


def due_at(
    *, delay: timedelta | None, not_before: datetime | None, now: datetime
) -> datetime | None:
    """When a job enqueued at `now` with this schedule is due; None for at once (checked first)."""
    check_schedule(delay, not_before)
    if delay is not None:
        return now + delay
    return not_before


def check_unique_key(unique_key: str | None) -> None:
    """ValueError for an empty unique key (None means none)."""
    if unique_key is not None and not unique_key:
        raise ValueError("a unique key must be a non-empty string (or None for none)")
