"""Snooze: a handler runs again after a delay without spending an attempt, a bounded number of
times; past the bound the job is dead-lettered, saying so."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from attrs import frozen
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs import Definitions, JobDefinition, RetryPolicy, Snooze, Worker, enqueue
from tests.core.worker_kit import NO_BACKOFF, eventually, fast_queue, running

ONE_TRY = RetryPolicy(attempts=1, base=timedelta(seconds=1), cap=timedelta(seconds=1))


@frozen
class Poll:
    report_id: int


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=6), st.integers(min_value=0, max_value=4))
def test_snoozes_spend_no_attempt_up_to_the_bound(snoozes: int, bound: int) -> None:
    runs: list[tuple[int, int]] = []

    async def poll(args: Poll) -> None:
        runs.append((args.report_id, len(runs)))
        if len(runs) <= snoozes:
            raise Snooze(timedelta(0), "report not ready")

    async def scenario() -> None:
        # One attempt only: any snooze that spent an attempt would dead-letter the job.
        definition = JobDefinition("poll", Poll, poll, retry=ONE_TRY)
        queue = fast_queue()
        await enqueue(queue, definition.job(Poll(7)))
        worker = Worker(
            queue=queue,
            definitions=Definitions(definition),
            max_snoozes=bound,
            backoff=NO_BACKOFF,
            shutdown_grace=timedelta(seconds=1),
        )
        async with running(worker):
            await eventually(lambda: queue.depth == 0)
        dead = await queue.list()
        if snoozes <= bound:
            assert (len(runs), dead) == (snoozes + 1, [])
        else:
            [buried] = dead
            assert len(runs) == bound + 1
            assert buried.attempts == 1
            assert buried.error.startswith(f"Snooze: snoozed {bound} times, the most a job may")

    anyio.run(scenario)


def test_a_negative_snooze_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        Snooze(timedelta(seconds=-1))
