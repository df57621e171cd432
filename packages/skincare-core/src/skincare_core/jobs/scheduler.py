"""Runs periodic schedules: each tick enqueued once, however many scheduler processes run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import anyio

from skincare_core.jobs.ports import ScheduleStore
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.jobs.schedule import DEFAULT_TIMEZONE, Schedule, until

logger = logging.getLogger(__name__)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Schedules:
    """The periodic jobs a team declares in code, by name."""

    def __init__(self) -> None:
        self._schedules: dict[str, Schedule] = {}

    def add(
        self,
        name: str,
        cron: str,
        job_type: str,
        payload: Mapping[str, str] | None = None,
        *,
        timezone: str = DEFAULT_TIMEZONE,
    ) -> Schedule:
        """Enqueue `job_type` at every tick of `cron` (5 fields, or 6 with seconds last) read
        in `timezone`; ValueError for a bad expression or zone, or a name added twice."""
        if name in self._schedules:
            raise ValueError(f"a schedule named {name!r} is already added")
        schedule = Schedule(name, cron, job_type, payload or {}, timezone)
        self._schedules[name] = schedule
        return schedule

    @property
    def all(self) -> tuple[Schedule, ...]:
        """Every schedule, in the order added."""
        return tuple(self._schedules.values())


class Scheduler:
    """Enqueues each schedule's latest due tick through a `ScheduleStore`.

    After downtime only the one most recent missed tick is enqueued: ticks are claimed in
    order, and a claim of tick T is refused once a later tick was recorded.
    """

    def __init__(
        self,
        *,
        schedules: Schedules,
        store: ScheduleStore,
        routes: QueueRoutes,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._schedules = schedules.all
        self._store = store
        self._routes = routes
        self._clock = clock

    @property
    def schedules(self) -> tuple[Schedule, ...]:
        """The schedules this scheduler runs."""
        return self._schedules

    async def begin(self) -> None:
        """Give every new schedule a last run (its latest tick), so it starts at the next."""
        now = self._clock()
        for schedule in self._schedules:
            await self._store.begin(schedule, schedule.last_tick(now))

    async def run_due(self) -> list[str]:
        """Claim every schedule's latest tick up to now; the names of those this call enqueued."""
        now = self._clock()
        enqueued = []
        for schedule in self._schedules:
            tick = schedule.last_tick(now)
            if await self._store.claim(
                schedule.name,
                tick,
                schedule.envelope(tick, self._routes.queue_of(schedule.job_type)),
            ):
                logger.info(
                    "schedule.enqueued", extra={"schedule": schedule.name, "tick": str(tick)}
                )
                enqueued.append(schedule.name)
        return enqueued

    def next_wake(self) -> datetime | None:
        """The earliest next tick of any schedule; None without schedules."""
        now = self._clock()
        return min((s.next_tick(now) for s in self._schedules), default=None)

    async def run(self) -> None:
        """Forever: wait for the next tick, then claim what is due (errors logged, not raised)."""
        try:
            await self.begin()
        except Exception as exc:
            logger.error("schedule.begin_failed", extra={"error": repr(exc)})
        while (wake := self.next_wake()) is not None:
            await anyio.sleep(until(wake, self._clock()).total_seconds())
            try:
                await self.run_due()
            except Exception as exc:
                logger.error("schedule.claim_failed", extra={"error": repr(exc)})
