"""PostgresQueueStats of one named queue counts only that queue's jobs; a claim says when the
job became due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import new_job
from skincare_postgres import postgres_backend
from skincare_postgres.jobs.stats import PostgresQueueStats

pytestmark = pytest.mark.anyio


async def test_each_named_queue_counts_its_own_jobs(engine: AsyncEngine) -> None:
    async with postgres_backend(engine, queues=["default", "bulk"]) as backend:
        await enqueue(backend.queue("default"), new_job("a"))
        await enqueue(backend.queue("bulk"), new_job("b"))
        await enqueue(backend.queue("bulk"), new_job("c"))
    default = await PostgresQueueStats(engine, queue="default").stats()
    bulk = await PostgresQueueStats(engine, queue="bulk").stats()
    every = await PostgresQueueStats(engine).stats()
    assert (default.ready, bulk.ready, every.ready) == (1, 2, 3)
    assert (await PostgresQueueStats(engine, queue="critical").stats()).ready == 0


async def test_a_first_delivery_says_when_the_job_became_due(engine: AsyncEngine) -> None:
    async with postgres_backend(engine) as backend:
        before = datetime.now(UTC)
        await enqueue(backend.queue(), new_job("a"))
        [message] = await backend.queue().receive(1)
    assert message.enqueued_at is not None
    assert before - timedelta(seconds=1) <= message.enqueued_at <= datetime.now(UTC)
