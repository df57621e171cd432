"""Settlement through the completer. The retry rule (`SettleRetry`) on the in-memory queue and a
fake clock: a settlement that raises `Unavailable` is tried again, with pauses of 50 ms doubling
to 2 s (full jitter), while the job's lease holds, and never after; it goes through once the
outage ends a pause before the lease does; any other error is tried once. The worker when its
queue cannot settle for a while: finished jobs are acked once the queue is back instead of
waiting out their lease and running again; failed ones are retried or dead-lettered the same
way; slots stay taken meanwhile; a stop waits up to its grace."""

from __future__ import annotations

import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta

import anyio
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skincare_core.jobs.completer import (
    SETTLE_PAUSE_CAP,
    SETTLE_PAUSE_FIRST,
    Completer,
    SettleRetry,
)
from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.metrics import NoMetrics
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.jobs.router import Router
from tests.core.outage_kit import FakeTime, Outage, OutageQueue, QueueDown, Scenario
from tests.core.worker_kit import eventually, running, worker_on
from tests.log_records import fields

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


class Runs:
    """A handler counting its runs per job; fails each job's first run with `first_error`."""

    def __init__(self, first_error: Exception | None = None, seconds: float = 0.0) -> None:
        self.counts: Counter[str] = Counter()
        self.first_error, self.seconds = first_error, seconds

    async def __call__(self, job: Job) -> None:
        self.counts[job.id] += 1
        await anyio.sleep(self.seconds)
        if self.first_error is not None and self.counts[job.id] == 1:
            raise self.first_error


def _setup(runs: Runs, visibility: float = 5.0) -> tuple[Outage, OutageQueue, Router]:
    outage = Outage()
    queue = OutageQueue(
        outage, visibility_timeout=timedelta(seconds=visibility), wait=timedelta(seconds=0.02)
    )
    router = Router()
    router.register("work", runs)
    return outage, queue, router


async def _enqueue(queue: OutageQueue, count: int) -> None:
    for n in range(count):
        await enqueue_job(queue, new_job("work", n=str(n)))


async def test_acks_failing_for_a_moment_go_through_after_it_and_no_job_runs_twice() -> None:
    runs = Runs()
    outage, queue, router = _setup(runs)
    outage.start(0.3)
    await _enqueue(queue, 12)
    async with running(
        worker_on(queue, router, concurrency=4, visibility_timeout=timedelta(seconds=5))
    ):
        # Well inside the 5 s lease: 0.3 s of outage, then a pause of at most 2 s.
        await eventually(lambda: queue.depth == 0, within=3.0)
    assert len(runs.counts) == 12
    assert max(runs.counts.values()) == 1


async def test_while_acks_fail_the_worker_claims_no_more_than_its_slots_hold() -> None:
    runs = Runs(seconds=0.01)
    outage, queue, router = _setup(runs)
    outage.start(60.0)
    await _enqueue(queue, 40)
    async with running(worker_on(queue, router, concurrency=4)):
        await anyio.sleep(0.5)
        during = sum(runs.counts.values())
        outage.end()
        await eventually(lambda: queue.depth == 0, within=4.0)
    # Each job whose ack is retried holds its slot: 4, plus the batch a claim had in hand.
    assert 4 <= during <= 8
    assert max(runs.counts.values()) == 1


@pytest.mark.parametrize(
    "error", [ConnectionError("flaky"), PermanentJobError("bad order")], ids=["nack", "dead"]
)
async def test_a_nack_or_dead_letter_failing_for_a_moment_is_retried(error: Exception) -> None:
    runs = Runs(first_error=error)
    outage, queue, router = _setup(runs)
    await _enqueue(queue, 3)
    outage.start(0.3)
    async with running(worker_on(queue, router, concurrency=3)):
        await eventually(lambda: queue.depth == 0, within=3.0)
    dead = await queue.list()
    if isinstance(error, PermanentJobError):
        assert (len(dead), set(runs.counts.values())) == (3, {1})
    else:
        # Nacked with no backoff, so each ran again at once, not after its 5 s lease.
        assert (len(dead), set(runs.counts.values())) == (0, {2})


async def test_a_stop_waits_for_a_retried_ack_within_the_grace() -> None:
    runs = Runs()
    outage, queue, router = _setup(runs)
    await _enqueue(queue, 2)
    worker = worker_on(queue, router, shutdown_grace=timedelta(seconds=3))
    async with running(worker):
        await eventually(lambda: len(runs.counts) == 2)
        outage.start(0.3)
    assert queue.depth == 0


async def test_a_stop_gives_up_retrying_when_its_grace_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs = Runs()
    outage, queue, router = _setup(runs)
    outage.start(60.0)
    await _enqueue(queue, 1)
    async with running(worker_on(queue, router, shutdown_grace=timedelta(seconds=0.3))):
        await eventually(lambda: len(queue.tries) >= 2)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 1.0
    [given_up] = [r for r in caplog.records if r.message == "queue.settle_failed"]
    assert fields(given_up, "reason") == ("worker stopped",)
    assert queue.depth == 1


async def test_an_outage_longer_than_the_lease_gives_up_once_and_the_job_comes_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "skincare_core.jobs.worker")
    runs = Runs()
    outage, queue, router = _setup(runs, visibility=0.4)
    outage.start(0.8)
    await _enqueue(queue, 1)
    worker = worker_on(queue, router, visibility_timeout=timedelta(seconds=0.4))
    async with running(worker):
        await eventually(lambda: queue.depth == 0, within=4.0)
    retrying = [r for r in caplog.records if r.message == "queue.settle_retrying"]
    given_up = [r for r in caplog.records if r.message == "queue.settle_failed"]
    # Logged once per delivery whose lease ended first; the delivery after the outage acked.
    attempts = [fields(r, "attempts", "reason") for r in given_up]
    assert attempts == [(n, "lease over") for n in range(1, len(given_up) + 1)]
    assert 1 <= len(given_up) <= len(retrying) <= len(given_up) + 1
    assert list(runs.counts.values()) == [len(given_up) + 1]


class Recorder(OutageQueue):
    """An OutageQueue that keeps the size of every settlement call, and fails lease renewals
    as it fails settlements."""

    def __init__(self, down: Callable[[], bool], **options: object) -> None:
        super().__init__(down, **options)  # type: ignore[arg-type]
        self.calls: list[tuple[str, int]] = []

    async def ack_many(self, messages: Sequence[Message]) -> None:
        self.calls.append(("ack_many", len(messages)))
        await super().ack_many(messages)

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        self.calls.append(("retry_many", len(retries)))
        await super().retry_many(retries)

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        self.calls.append(("dead_letter_many", len(burials)))
        await super().dead_letter_many(burials)

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        self._try(len(messages))
        await super().extend_many(messages, visibility)


class Settled:
    """The completer's `settled` hook: counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1


def _completer(queue: OutageQueue, *, batch: int = 6, lease: float = 5.0) -> Completer:
    retry = SettleRetry(queue=queue.name, metrics=NoMetrics(), lease=lease)
    return Completer(queue, Settled(), batch=batch, linger=0.005, retry=retry)


async def _leased(queue: OutageQueue, count: int) -> list[Message]:
    for n in range(count):
        await enqueue_job(queue, new_job("work", n=str(n)))
    return await queue.receive(count)


async def test_each_kind_of_settlement_goes_out_in_one_call_per_batch() -> None:
    queue = Recorder(lambda: False, wait=timedelta(0))
    leased = await _leased(queue, 6)
    completer, now = _completer(queue), time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(completer.run)
        for message in leased[:3]:
            completer.add(message, now)
        for message in leased[3:5]:
            completer.add(Retry(message, timedelta(0)), now)
        completer.add(Burial(leased[5], "PermanentJobError: no"), now)
        await eventually(lambda: len(completer) == 0)
        completer.close()
    assert sorted(queue.calls) == [("ack_many", 3), ("dead_letter_many", 1), ("retry_many", 2)]
    assert sorted(m.job.id for m in await queue.receive(10)) == sorted(
        m.job.id for m in leased[3:5]
    )
    assert [d.job.id for d in await queue.list()] == [leased[5].job.id]


async def test_a_settlement_being_retried_holds_a_slot_until_it_goes_through() -> None:
    outage = Outage()
    queue = Recorder(outage, wait=timedelta(0))
    [message] = await _leased(queue, 1)
    completer = _completer(queue, batch=1)
    outage.start(0.3)
    async with anyio.create_task_group() as tg:
        tg.start_soon(completer.run)
        completer.add(Retry(message, timedelta(0)), time.monotonic())
        await eventually(lambda: len(queue.tries) >= 2)
        assert (len(completer), completer.held(1)) == (1, 1)
        await eventually(lambda: len(completer) == 0, within=3.0)
        completer.close()
    assert completer.held(1) == 0
    assert [m.attempts for m in await queue.receive(1)] == [2]


async def test_a_lease_renewal_the_queue_cannot_take_is_retried_while_the_lease_holds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "skincare_core.jobs.worker")
    outage = Outage()
    queue = Recorder(outage, visibility_timeout=timedelta(seconds=1), wait=timedelta(0))
    [message] = await _leased(queue, 1)
    leased_at = time.monotonic()
    completer = _completer(queue, lease=1.0)
    outage.start(0.2)

    def events() -> list[str]:
        return [r.message for r in caplog.records if r.message.startswith("queue.settle")]

    async with anyio.create_task_group() as tg:
        tg.start_soon(completer.run)
        completer.extend([message], [leased_at], timedelta(seconds=5))
        # Tries at most 50, 100, 200 and 400 ms apart: one after the outage, inside the lease.
        await eventually(lambda: len(events()) == 2, within=1.0)
        await anyio.sleep(leased_at + 1.2 - time.monotonic())
        assert await queue.receive(1) == []
        completer.close()
    assert events() == ["queue.settle_retrying", "queue.settle_recovered"]


async def test_close_settles_what_waits_once_and_retries_nothing() -> None:
    queue = Recorder(lambda: True, wait=timedelta(0))
    leased = await _leased(queue, 2)
    completer = _completer(queue)
    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(completer.run)
            for message in leased:
                completer.add(message, time.monotonic())
            completer.close()
    assert queue.calls == [("ack_many", 2)]
    assert queue.depth == 2


class CountingMetrics(NoMetrics):
    """Counts `settle_failed` calls."""

    def __init__(self) -> None:
        self.settle_failures = 0

    def settle_failed(self, queue: str) -> None:
        self.settle_failures += 1


async def test_an_error_other_than_unavailable_is_counted_once_per_job_and_not_retried() -> None:
    queue = Recorder(lambda: False, wait=timedelta(0))
    queue.error = RuntimeError("bug")
    leased = await _leased(queue, 3)
    metrics = CountingMetrics()
    retry = SettleRetry(queue=queue.name, metrics=metrics, lease=5.0)
    completer = Completer(queue, Settled(), batch=3, linger=0.005, retry=retry)
    async with anyio.create_task_group() as tg:
        tg.start_soon(completer.run)
        for message in leased:
            completer.add(message, time.monotonic())
        await eventually(lambda: len(completer) == 0)
        await anyio.sleep(0.1)
        completer.close()
    assert (queue.calls, metrics.settle_failures) == ([("ack_many", 3)], 3)
