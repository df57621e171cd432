"""Periodic schedules: tick computation (properties) and exactly-once claims on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs import QueueRoutes, Scheduler, Schedules
from skincare_core.jobs.schedule import Schedule
from skincare_core.testing.jobs import InMemoryQueues, InMemoryScheduleStore
from skincare_core.testing.shop import ManualClock

pytestmark = pytest.mark.anyio
_CRONS = ["* * * * * *", "*/5 * * * *", "0 7 * * *", "30 2 * * 1-5", "0 0 1 * *"]
_MOMENTS = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1), timezones=st.just(UTC)
)


@given(cron=st.sampled_from(_CRONS), at=_MOMENTS)
def test_last_tick_is_at_or_before_and_next_tick_after(cron: str, at: datetime) -> None:
    schedule = Schedule("s", cron, "job")
    last, upcoming = schedule.last_tick(at), schedule.next_tick(at)
    assert last <= at < upcoming
    assert schedule.next_tick(last) == upcoming
    assert schedule.last_tick(last) == last


def test_daily_seven_in_jakarta_is_midnight_utc() -> None:
    schedule = Schedule("daily", "0 7 * * *", "job")
    at = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
    assert schedule.next_tick(at) == datetime(2026, 12, 5, 0, 0, tzinfo=UTC)
    assert Schedule("d", "0 7 * * *", "job", timezone="UTC").next_tick(at).hour == 7


@pytest.mark.parametrize(
    ("cron", "zone", "error"),
    [("61 * * * *", "UTC", "cron"), ("* * * * *", "Mars/Base", "time zone")],
)
def test_bad_schedules_are_refused_with_one_line(cron: str, zone: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        Schedule("s", cron, "job", timezone=zone)


def _scheduler(schedules: Schedules, store: InMemoryScheduleStore, clock: ManualClock) -> Scheduler:
    return Scheduler(schedules=schedules, store=store, routes=QueueRoutes(), clock=clock.now)


async def test_three_schedulers_enqueue_each_tick_once() -> None:
    queues, clock = InMemoryQueues(), ManualClock()
    schedules = Schedules()
    schedules.add("every-second", "* * * * * *", "ping", {"who": "ops"})
    store = InMemoryScheduleStore(queues)
    schedulers = [_scheduler(schedules, store, clock) for _ in range(3)]
    for scheduler in schedulers:
        await scheduler.begin()
    for _ in range(10):
        clock.advance(timedelta(seconds=1))
        for scheduler in schedulers:
            await scheduler.run_due()
    jobs = queues.queue().jobs()
    assert len(jobs) == 10
    assert len({job.payload["tick"] for job in jobs}) == 10
    assert jobs[0].payload["who"] == "ops"


async def test_after_downtime_only_the_latest_missed_tick_runs() -> None:
    queues, clock = InMemoryQueues(), ManualClock()
    schedules = Schedules()
    schedules.add("hourly", "0 * * * *", "ping")
    scheduler = _scheduler(schedules, InMemoryScheduleStore(queues), clock)
    await scheduler.begin()
    assert await scheduler.run_due() == []
    clock.advance(timedelta(hours=5, minutes=30))
    assert await scheduler.run_due() == ["hourly"]
    assert await scheduler.run_due() == []
    [job] = queues.queue().jobs()
    assert job.payload["tick"] == "2026-12-01T14:00:00+00:00"


def test_a_schedule_name_is_added_once() -> None:
    schedules = Schedules()
    schedules.add("a", "* * * * *", "job")
    with pytest.raises(ValueError, match="already added"):
        schedules.add("a", "0 * * * *", "job")


async def test_next_wake_is_the_earliest_tick() -> None:
    schedules, clock = Schedules(), ManualClock()
    schedules.add("daily", "0 7 * * *", "a")
    schedules.add("hourly", "0 * * * *", "b")
    scheduler = _scheduler(schedules, InMemoryScheduleStore(InMemoryQueues()), clock)
    assert scheduler.next_wake() == datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
