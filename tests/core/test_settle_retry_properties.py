"""Property tests of the settle retry rule (`SettleRetry`) on the in-memory queue and a fake
clock: a settlement that raises `Unavailable` is tried again, with pauses of 50 ms doubling to
2 s (full jitter), while the job's lease holds, and never after; it goes through once the
outage ends a pause before the lease does; any other error is tried once."""

from __future__ import annotations

import itertools
from datetime import timedelta

import anyio
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skincare_core.jobs.completer import SETTLE_PAUSE_CAP, SETTLE_PAUSE_FIRST, SettleRetry
from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.job import new_job
from skincare_core.jobs.metrics import NoMetrics
from tests.core.outage_kit import FakeTime, OutageQueue, QueueDown, Scenario

pytestmark = pytest.mark.anyio
RULE = settings(max_examples=300, deadline=None)
# Whole milliseconds: the queue keeps its visibility as a timedelta (microseconds).
LEASES = st.integers(min_value=500, max_value=60_000).map(lambda ms: ms / 1000)
OUTAGES = st.floats(min_value=0.0, max_value=90.0)
KINDS = st.sampled_from(["ack", "nack", "dead_letter"])


@RULE
@given(KINDS, LEASES, OUTAGES, st.integers())
async def test_no_try_after_the_lease_and_none_after_success(
    kind: str, lease: float, outage: float, seed: int
) -> None:
    scenario = Scenario(kind, lease, outage, seed)
    settled = await scenario.settle()
    assert all(at < lease for at in scenario.times)
    # Went through exactly when its last try came after the outage; nothing was tried after it.
    assert settled == (scenario.times[-1] >= outage)
    assert all(at < outage for at in scenario.times[:-1])


@RULE
@given(KINDS, LEASES, OUTAGES, st.integers())
async def test_pauses_double_from_50_ms_up_to_2_s(
    kind: str, lease: float, outage: float, seed: int
) -> None:
    scenario = Scenario(kind, lease, outage, seed)
    await scenario.settle()
    times = scenario.times
    for failures, (before, after) in enumerate(itertools.pairwise(times)):
        ceiling = min(SETTLE_PAUSE_CAP, SETTLE_PAUSE_FIRST * 2**failures)
        assert 0.0 <= after - before <= ceiling + 1e-9


@RULE
@given(KINDS, LEASES, OUTAGES, st.integers())
async def test_an_outage_ending_a_pause_before_the_lease_settles_within_that_pause(
    kind: str, lease: float, outage: float, seed: int
) -> None:
    assume(outage + SETTLE_PAUSE_CAP < lease)
    scenario = Scenario(kind, lease, outage, seed)
    assert await scenario.settle()
    assert outage <= scenario.times[-1] < outage + SETTLE_PAUSE_CAP
    # Settled in time: the job is gone, or (a nack) back at once, not after the lease.
    again = await scenario.queue.receive()
    expected = [2] if kind == "nack" else []
    assert [m.attempts for m in again] == expected


@RULE
@given(KINDS, LEASES, st.floats(min_value=0.0, max_value=30.0), st.integers())
async def test_an_outage_outlasting_the_lease_gives_up_and_the_job_comes_back(
    kind: str, lease: float, longer: float, seed: int
) -> None:
    scenario = Scenario(kind, lease, lease + longer, seed)
    assert not await scenario.settle()
    assert scenario.time.now < lease
    scenario.time.now = lease + 0.001
    [again] = await scenario.queue.receive()
    assert again.attempts == 2


@given(KINDS, st.sampled_from([RuntimeError("bug"), ValueError("refused")]))
async def test_an_error_other_than_unavailable_is_tried_once(kind: str, error: Exception) -> None:
    scenario = Scenario(kind, 30.0, 0.0, 0)
    scenario.queue.error = error
    assert not await scenario.settle()
    assert scenario.times == [0.0]


async def test_a_batch_retries_only_the_jobs_whose_lease_holds() -> None:
    time = FakeTime()
    queue = OutageQueue(lambda: time.now < 5.0, clock=time, wait=timedelta(0))
    retry = SettleRetry(
        queue="default", metrics=NoMetrics(), lease=30.0, clock=time, sleep=time.sleep
    )
    for _ in range(2):
        await enqueue_job(queue, new_job("noop"))
    first, second = await queue.receive(2)
    # The first job's lease was renewed 27 s before: it ends 3 s into the outage.
    pending = [retry.leased(first, -27.0), retry.leased(second, 0.0)]
    assert not await retry.settle(queue.ack_many, pending)
    assert {jobs for at, jobs in queue.tries if at >= 3.0} == {1}
    assert [job.id for job in queue.jobs()] == [first.job.id]


async def test_stop_ends_the_retries_at_once() -> None:
    time = FakeTime()
    queue = OutageQueue(lambda: True, clock=time, wait=timedelta(0))
    retry = SettleRetry(queue="default", metrics=NoMetrics(), lease=30.0, clock=time)
    await enqueue_job(queue, new_job("noop"))
    [message] = await queue.receive()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(retry.settle, queue.ack_many, [retry.leased(message, 0.0)])
            await anyio.sleep(0.2)
            retry.stop()
    tries = len(queue.tries)
    assert not await retry.settle(queue.ack_many, [retry.leased(message, 0.0)])
    assert len(queue.tries) == tries + 1


async def test_a_bug_raised_between_two_outage_tries_ends_the_retries() -> None:
    time = FakeTime()
    queue = OutageQueue(lambda: time.now < 0.01, clock=time, wait=timedelta(0))
    retry = SettleRetry(
        queue="default", metrics=NoMetrics(), lease=30.0, clock=time, sleep=time.sleep
    )
    await enqueue_job(queue, new_job("noop"))
    [message] = await queue.receive()

    async def ack_then_break(messages: object) -> None:
        if queue.tries:
            queue.error = RuntimeError("bug")
        await queue.ack_many([message])

    assert not await retry.settle(ack_then_break, [retry.leased(message, 0.0)])
    assert len(queue.tries) == 2


async def test_a_cancelled_retry_gives_up_and_passes_the_cancellation_on() -> None:
    queue = OutageQueue(lambda: True, wait=timedelta(0))
    retry = SettleRetry(queue="default", metrics=NoMetrics(), lease=30.0)
    await enqueue_job(queue, new_job("noop"))
    [message] = await queue.receive()
    with anyio.move_on_after(0.2) as scope:
        await retry.retry(queue.ack_many, [retry.leased(message, 1e12)], QueueDown("down"))
    assert scope.cancelled_caught
    assert queue.depth == 1
