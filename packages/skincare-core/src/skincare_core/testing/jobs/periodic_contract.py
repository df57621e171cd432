"""The periodic-jobs and rate-limit contract: what every backend's `ScheduleStore` and
`RateLimiter` promise. Subclass `PeriodicContract` and override `backend` to yield a fresh, empty
backend serving the `default` queue, with `schedules` and `rate_limiter` set."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import RateLimiter, ScheduleStore
from skincare_core.jobs.schedule import Schedule
from skincare_core.testing.jobs.scheduling_contract import jobs_from, nothing_on

_SCHEDULE = Schedule("contract-every-second", "* * * * * *", "contract_ping", {"k": "v"})
_TICK = datetime(2026, 12, 4, 7, 0, 5, tzinfo=UTC)


def _store(backend: Backend) -> ScheduleStore:
    assert backend.schedules is not None, "the backend must have a schedule store"
    return backend.schedules


def _limiter(backend: Backend) -> RateLimiter:
    assert backend.rate_limiter is not None, "the backend must have a rate limiter"
    return backend.rate_limiter


class PeriodicContract:
    """One job per tick whoever claims it; later ticks only; windows never over the limit."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def backend(self) -> AsyncIterator[Backend]:
        """Override: yield a fresh backend serving `default`."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_concurrent_claims_of_a_tick_enqueue_one_job(self, backend: Backend) -> None:
        store, wins = _store(backend), []

        async def claim() -> None:
            wins.append(await store.claim(_SCHEDULE.name, _TICK, _SCHEDULE.envelope(_TICK)))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(claim)
        assert sorted(wins) == [False] * 4 + [True]
        [job] = await jobs_from(backend.queue(), 1)
        assert job == _SCHEDULE.job(_TICK)
        assert job.payload == {"k": "v", "tick": _TICK.isoformat()}
        await nothing_on(backend.queue())

    async def test_an_earlier_or_equal_tick_is_refused(self, backend: Backend) -> None:
        store = _store(backend)
        assert await store.claim(_SCHEDULE.name, _TICK, _SCHEDULE.envelope(_TICK))
        earlier = _TICK - timedelta(seconds=1)
        assert not await store.claim(_SCHEDULE.name, earlier, _SCHEDULE.envelope(earlier))
        assert not await store.claim(_SCHEDULE.name, _TICK, _SCHEDULE.envelope(_TICK))

    async def test_begin_keeps_the_last_run_and_records_the_rule(self, backend: Backend) -> None:
        store = _store(backend)
        await store.begin(_SCHEDULE, _TICK)
        await store.begin(_SCHEDULE, _TICK + timedelta(hours=1))
        [record] = await store.records()
        rule = (record.name, record.cron, record.timezone, record.job_type)
        assert rule == (_SCHEDULE.name, "* * * * * *", "Asia/Jakarta", "contract_ping")
        assert record.last_tick == _TICK
        later = _TICK + timedelta(seconds=1)
        assert await store.claim(_SCHEDULE.name, later, _SCHEDULE.envelope(later))

    async def test_one_window_grants_at_most_the_limit(self, backend: Backend) -> None:
        limiter = _limiter(backend)
        # Start early in a second, so the asks below fall in one window.
        await anyio.sleep(1 - time.time() % 1 + 0.01)
        granted: list[int] = []

        async def ask() -> None:
            granted.append(await limiter.acquire("contract", 3, 5))

        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(ask)
        assert sorted(granted) == [0, 0, 2, 3]
        assert await limiter.acquire("other-key", 3, 5) == 3
