"""Periodic schedules and rate limits on the real database, across schedulers and processes."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import QueueRoutes, Scheduler, Schedules, enqueue, new_job
from skincare_postgres import (
    PostgresRateLimiter,
    PostgresScheduleStore,
    create_engine,
    postgres_backend,
)

pytestmark = pytest.mark.anyio


def _every_second() -> Schedules:
    schedules = Schedules()
    schedules.add("every-second", "* * * * * *", "ping")
    return schedules


async def _run_schedulers(url: str, count: int, seconds: float) -> None:
    engines = [create_engine(url) for _ in range(count)]
    try:
        async with anyio.create_task_group() as tg:
            for engine in engines:
                store = PostgresScheduleStore(engine)
                scheduler = Scheduler(schedules=_every_second(), store=store, routes=QueueRoutes())
                tg.start_soon(scheduler.run)
            await anyio.sleep(seconds)
            tg.cancel_scope.cancel()
    finally:
        for engine in engines:
            await engine.dispose()


@pytest.mark.slow
async def test_three_schedulers_enqueue_each_tick_of_ten_seconds_once(
    engine: AsyncEngine, shop_url: str
) -> None:
    await _run_schedulers(shop_url, 3, 10.2)
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT unique_key FROM jobs WHERE type = 'ping'"))
        keys = sorted(str(key) for (key,) in rows)
    # A ~10 s run spans 10 ticks (one more or less by where it starts in a second).
    assert 9 <= len(keys) <= 11
    assert len(set(keys)) == len(keys)
    [record] = await PostgresScheduleStore(engine).records()
    assert keys[-1].endswith(record.last_tick.isoformat())


async def test_a_claimed_tick_is_refused_to_every_later_claimer(engine: AsyncEngine) -> None:
    schedules = _every_second()
    [schedule] = schedules.all
    store = PostgresScheduleStore(engine)
    tick = datetime(2026, 12, 4, 7, 0, 5, tzinfo=UTC)
    results = [await store.claim(schedule.name, tick, schedule.envelope(tick)) for _ in range(3)]
    earlier = tick - timedelta(seconds=1)
    assert results == [True, False, False]
    assert not await store.claim(schedule.name, earlier, schedule.envelope(earlier))
    await store.begin(schedule, earlier)
    [record] = await store.records()
    assert (record.name, record.cron, record.last_tick) == (schedule.name, "* * * * * *", tick)


async def test_rate_windows_grant_at_most_the_limit(engine: AsyncEngine) -> None:
    # Three asks of 3 at 5/s: at most 5 in each one-second window (the asks may straddle two).
    limiter = PostgresRateLimiter(engine)
    in_window: Counter[datetime] = Counter()
    granted = []
    for _ in range(3):
        granted.append(await limiter.acquire("q", 3, 5))
        in_window[await _window_of(engine, "q")] += granted[-1]
    assert max(in_window.values()) <= 5
    assert granted[0] == 3
    assert len(in_window) > 1 or sum(granted) == 5


async def _window_of(engine: AsyncEngine, key: str) -> datetime:
    # The window the key's last grant was counted in.
    async with engine.connect() as conn:
        found = await conn.execute(
            text("SELECT window_start FROM job_rate_windows WHERE key = :key"), {"key": key}
        )
        start: datetime = found.scalar_one()
        return start


@pytest.mark.slow
async def test_two_processes_share_one_rate_limit(
    engine: AsyncEngine, shop_url: str, tmp_path: Path
) -> None:
    async with postgres_backend(engine) as backend:
        for n in range(20):
            await enqueue(backend.queue(), new_job("mail", n=str(n)))
    outs = [tmp_path / f"worker-{n}.txt" for n in range(2)]
    _run_workers(shop_url, outs, per_second=5, seconds=6.0)
    starts = sorted(float(line) for out in outs for line in out.read_text().split())
    assert len(starts) == 20
    assert all(out.read_text() for out in outs)
    # 20 jobs at 5/s fill four one-second windows: more than two seconds from first to last.
    # Two processes each keeping 5/s on their own would fit them in two windows.
    assert starts[-1] - starts[0] > 2.0


def _run_workers(url: str, outs: Sequence[Path], *, per_second: int, seconds: float) -> None:
    module = "tests.postgres.throttled_worker"
    children = [
        subprocess.Popen(
            [sys.executable, "-m", module, url, str(out), str(per_second), str(seconds)]
        )
        for out in outs
    ]
    for child in children:
        assert child.wait(timeout=seconds + 30) == 0
