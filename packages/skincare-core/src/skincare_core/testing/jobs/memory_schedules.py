"""In-memory schedule store and rate limiter: the Postgres ones' rules, in one process."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.ports import JobSink, ScheduleRecord
from skincare_core.jobs.schedule import Schedule


class InMemoryScheduleStore:
    """Last ticks in a dict; a claimed tick's envelope goes to `sink` (an `InMemoryQueues`)."""

    def __init__(self, sink: JobSink) -> None:
        self._sink = sink
        self._last: dict[str, datetime] = {}
        self._rules: dict[str, Schedule] = {}

    async def begin(self, schedule: Schedule, tick: datetime) -> None:
        """Keep the rule; record `tick` unless the schedule has a last run."""
        self._rules[schedule.name] = schedule
        self._last.setdefault(schedule.name, tick)

    async def claim(self, schedule: str, tick: datetime, envelope: Envelope) -> bool:
        """Record `tick` and enqueue if it is later than the last run (no await in between:
        one task per tick wins)."""
        last = self._last.get(schedule)
        if last is not None and last >= tick:
            return False
        self._last[schedule] = tick
        await self._sink.enqueue_many([envelope])
        return True

    async def records(self) -> list[ScheduleRecord]:
        """Every schedule begun here, by name."""
        return [_record(self._rules[name], self._last[name]) for name in sorted(self._rules)]


def _record(schedule: Schedule, last_tick: datetime) -> ScheduleRecord:
    rule = (schedule.name, schedule.cron, schedule.timezone, schedule.job_type)
    return ScheduleRecord(*rule, last_tick)


class InMemoryRateLimiter:
    """Fixed one-second windows per key, on `clock` (seconds)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._windows: dict[str, tuple[int, int]] = {}

    async def acquire(self, key: str, wanted: int, per_second: int) -> int:
        """Up to `wanted` of what is left of this second's `per_second`."""
        second = math.floor(self._clock())
        start, used = self._windows.get(key, (second, 0))
        used = used if start == second else 0
        granted = max(0, min(wanted, per_second - used))
        self._windows[key] = (second, used + granted)
        return granted
