"""job_outcomes on the real server: a window counts the minutes that started within it, a
settle prunes minutes older than an hour, and migration 0007 comes and goes keeping the jobs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import new_job
from skincare_core.jobs.outcomes import OutcomeCounts
from skincare_postgres import downgrade, postgres_backend, upgrade
from skincare_postgres.jobs.outcomes import PostgresJobOutcomes

pytestmark = pytest.mark.anyio

_ROW = (
    "INSERT INTO job_outcomes (queue, minute, done, failed)"
    " VALUES (:queue, date_trunc('minute', now()) - CAST(:ago AS interval), :done, :failed)"
)


async def _insert(engine: AsyncEngine, queue: str, ago: str, done: int, failed: int) -> None:
    async with engine.begin() as conn:
        params = {"queue": queue, "ago": ago, "done": done, "failed": failed}
        await conn.execute(text(_ROW), params)


async def test_the_window_counts_the_minutes_that_started_within_it(
    engine: AsyncEngine,
) -> None:
    await _insert(engine, "default", "0 minutes", 2, 0)
    await _insert(engine, "default", "4 minutes", 1, 1)
    await _insert(engine, "default", "5 minutes", 7, 7)
    await _insert(engine, "bulk", "30 minutes", 5, 0)
    outcomes = PostgresJobOutcomes(engine)
    assert await outcomes.recent(timedelta(minutes=5)) == {"default": OutcomeCounts(3, 1)}
    wide = await outcomes.recent(timedelta(hours=1))
    assert wide == {"default": OutcomeCounts(10, 8), "bulk": OutcomeCounts(5, 0)}


async def test_a_queue_s_first_ack_prunes_minutes_older_than_an_hour(
    engine: AsyncEngine,
) -> None:
    await _insert(engine, "default", "61 minutes", 9, 9)
    await _insert(engine, "default", "59 minutes", 1, 0)
    async with postgres_backend(engine) as backend:
        await enqueue(backend.queue(), new_job("outcome"))
        [message] = await backend.queue().receive(1)
        await backend.queue().ack_many([message])
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT done FROM job_outcomes ORDER BY minute"))).all()
    assert [row.done for row in rows] == [1, 1]


@pytest.mark.slow
def test_migration_0007_keeps_the_jobs_both_ways(new_database: Callable[[], str]) -> None:
    url = new_database()
    upgrade(url, "0006")
    engine = create_sync_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO jobs (id, type, body) VALUES ('j1', 'ping', '{}')"))
        upgrade(url, "0007")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO job_outcomes (queue, minute) VALUES ('q', now())"))
        downgrade(url, "0006")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT to_regclass('job_outcomes')")).scalar() is None
            assert conn.execute(text("SELECT id FROM jobs")).scalars().all() == ["j1"]
    finally:
        engine.dispose()
