"""Periodic jobs: a cron expression in a time zone, and the ticks it makes (croniter's rules)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attrs import field, frozen
from croniter import croniter

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job
from skincare_core.jobs.routing import DEFAULT_QUEUE

DEFAULT_TIMEZONE = "Asia/Jakarta"
"""The time zone of a schedule that names none: the shop's."""

_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,63}")


def _check_name(_: object, __: object, name: str) -> None:
    if not _NAME.fullmatch(name):
        raise ValueError(f"invalid schedule name {name!r}: a lowercase letter, then a-z 0-9 _ . -")


def _check_cron(_: object, __: object, cron: str) -> None:
    # A sixth field is seconds (croniter's order): "* * * * * *" ticks every second.
    if not croniter.is_valid(cron):
        raise ValueError(f"invalid cron expression {cron!r}")


def _check_zone(_: object, __: object, zone: str) -> None:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {zone!r}") from None


def _frozen_payload(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@frozen
class Schedule:
    """`job_type` with `payload`, enqueued at every tick of `cron` read in `timezone`."""

    name: str = field(validator=_check_name)
    cron: str = field(validator=_check_cron)
    job_type: str
    payload: Mapping[str, str] = field(factory=dict, converter=_frozen_payload)
    timezone: str = field(default=DEFAULT_TIMEZONE, validator=_check_zone)

    def next_tick(self, after: datetime) -> datetime:
        """The first tick strictly after `after` (aware), in UTC."""
        start = _aware(after).astimezone(ZoneInfo(self.timezone))
        return croniter(self.cron, start).get_next(datetime).astimezone(UTC)

    def last_tick(self, at: datetime) -> datetime:
        """The latest tick at or before `at` (aware), in UTC."""
        upcoming = self.next_tick(at).astimezone(ZoneInfo(self.timezone))
        return croniter(self.cron, upcoming).get_prev(datetime).astimezone(UTC)

    def unique_key(self, tick: datetime) -> str:
        """The unique key of this schedule's job for `tick`: one job per tick, whoever adds it."""
        return f"schedule:{self.name}:{tick.astimezone(UTC).isoformat()}"

    def job(self, tick: datetime) -> Job:
        """The job of `tick`: its id is derived from the tick, its payload carries the tick."""
        stamp = tick.astimezone(UTC)
        job_id = f"{self.name}-{stamp:%Y%m%dT%H%M%SZ}"
        return Job(
            id=job_id, type=self.job_type, payload={**self.payload, "tick": stamp.isoformat()}
        )

    def envelope(self, tick: datetime, queue: str = DEFAULT_QUEUE) -> Envelope:
        """The job of `tick` addressed to `queue`, unique under the tick's key."""
        return Envelope(self.job(tick), queue, None, self.unique_key(tick))


def _aware(moment: datetime) -> datetime:
    if moment.utcoffset() is None:
        raise ValueError("schedule times must be timezone-aware")
    return moment


def until(moment: datetime, now: datetime) -> timedelta:
    """How long from `now` to `moment`, never negative."""
    return max(moment - now, timedelta(0))
