"""Property: the Worker nacks each failure with the backoff of that attempt, and the queue holds
the job back for it. The backoff's delays are scaled down 2000 times (2 s -> 1 ms) to stay fast.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Retry
from skincare_core.jobs.retry import backoff_delay
from skincare_core.jobs.router import Router
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.worker_kit import eventually, running, worker_on

pytestmark = pytest.mark.anyio
SCALE = 2000


def scaled_backoff(attempts: int) -> timedelta:
    """The backoff, 2000 times shorter."""
    return backoff_delay(attempts) / SCALE


class NackLog(InMemoryQueue):
    """Records (attempts, delay) of each nack and the attempts of each ack."""

    def __init__(self) -> None:
        super().__init__(wait=timedelta(seconds=0.01))
        self.nacks: list[tuple[int, timedelta]] = []
        self.acks: list[int] = []

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        self.nacks.extend((r.message.attempts, r.delay) for r in retries)
        await super().retry_many(retries)

    async def ack_many(self, messages: Sequence[Message]) -> None:
        self.acks.extend(m.attempts for m in messages)
        await super().ack_many(messages)


async def run_flaky(failures: int | None, max_attempts: int) -> tuple[NackLog, list[float]]:
    """Run one job that fails `failures` times (always, for None); returns the call times."""
    queue, calls = NackLog(), []

    async def flaky(job: Job) -> None:
        calls.append(anyio.current_time())
        if failures is None or len(calls) <= failures:
            raise TimeoutError(f"provider slow ({len(calls)})")

    router = Router()
    router.register("flaky", flaky)
    await enqueue_job(queue, new_job("flaky"))
    worker = worker_on(queue, router, max_attempts=max_attempts, backoff=scaled_backoff)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    return queue, calls


@settings(max_examples=10, deadline=None)
@given(data=st.data(), max_attempts=st.integers(min_value=1, max_value=6))
async def test_each_retry_waits_the_backoff_of_its_attempt(
    data: st.DataObject, max_attempts: int
) -> None:
    k = data.draw(st.integers(min_value=0, max_value=max_attempts - 1), label="failures")
    queue, calls = await run_flaky(k, max_attempts)
    assert queue.nacks == [(n, scaled_backoff(n)) for n in range(1, k + 1)]
    assert queue.acks == [k + 1]
    gaps = [later - earlier for earlier, later in itertools.pairwise(calls)]
    # Each redelivery came no sooner than the delay of the nack before it (1 ms of clock slack).
    assert all(gap >= scaled_backoff(n).total_seconds() - 0.001 for n, gap in enumerate(gaps, 1))


@settings(max_examples=6, deadline=None)
@given(max_attempts=st.integers(min_value=1, max_value=6))
async def test_a_job_failing_every_time_is_nacked_with_each_backoff_then_dies(
    max_attempts: int,
) -> None:
    queue, calls = await run_flaky(None, max_attempts)
    assert len(calls) == max_attempts
    assert queue.nacks == [(n, scaled_backoff(n)) for n in range(1, max_attempts)]
    assert queue.acks == []
    [dead] = await queue.list()
    assert (dead.attempts, dead.error) == (
        max_attempts,
        f"TimeoutError: provider slow ({max_attempts})",
    )
