"""Batch settlements on the real server: each message of a batch gets its own delay or reason,
and a batch sent again (as after Unavailable) touches no newer lease and counts nothing twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import new_job
from skincare_core.jobs.outcomes import OutcomeCounts
from skincare_core.jobs.ports import Burial, Retry
from skincare_postgres import PostgresDeadLetters, PostgresJobOutcomes, PostgresQueue

pytestmark = pytest.mark.anyio


async def test_a_batch_sent_again_changes_nothing_and_counts_nothing_twice(
    queue: PostgresQueue, engine: AsyncEngine
) -> None:
    job = new_job("settle")
    await enqueue(queue, job)
    [first] = await queue.receive(1)
    for _ in range(2):
        await queue.retry_many([Retry(first, timedelta(0))])
    [second] = await queue.receive(1)
    assert (second.job, second.attempts) == (job, 2)
    await queue.retry_many([Retry(first, timedelta(0))])
    await queue.dead_letter_many([Burial(first, "stale")])
    await queue.ack_many([first])
    assert await queue.receive(1) == []
    for _ in range(2):
        await queue.ack_many([second])
    assert await PostgresDeadLetters(engine).count() == 0
    assert await PostgresJobOutcomes(engine).recent() == {"default": OutcomeCounts(1, 0)}


async def test_one_batch_gives_each_job_its_own_delay_or_reason(
    queue: PostgresQueue, engine: AsyncEngine
) -> None:
    jobs = [new_job("settle", n=str(n)) for n in range(4)]
    for job in jobs:
        await enqueue(queue, job)
    received = sorted(await queue.receive(4), key=lambda m: str(m.job.payload["n"]))
    now, later, doomed, lost = received
    await queue.retry_many([Retry(later, timedelta(hours=1)), Retry(now, timedelta(0))])
    await queue.dead_letter_many([Burial(doomed, "doomed"), Burial(lost, "lost")])
    again = await queue.receive(4)
    assert [(m.job, m.attempts) for m in again] == [(jobs[0], 2)]
    dead = await PostgresDeadLetters(engine).list()
    assert sorted((d.job.id, d.error) for d in dead) == sorted(
        [(jobs[2].id, "doomed"), (jobs[3].id, "lost")]
    )
    assert await PostgresJobOutcomes(engine).recent() == {"default": OutcomeCounts(0, 2)}
