"""The worker over the in-memory queue: concurrency, claims that follow the free slots, leases,
timeouts, retries, acks in batches, shutdown and logs."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs import worker as worker_module
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.errors import InvalidJob, PermanentJobError, RetryLater
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Retry
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.worker_kit import RecordingQueue, eventually, fast_queue, running, worker_on
from tests.log_records import fields

pytestmark = pytest.mark.anyio


def router_of(handler: object, job_type: str = "work") -> Router:
    router = Router()
    router.register(job_type, handler)  # type: ignore[arg-type]
    return router


async def enqueue(queue: InMemoryQueue, count: int, job_type: str = "work") -> list[Job]:
    jobs = [new_job(job_type, n=str(n)) for n in range(count)]
    for job in jobs:
        await enqueue_job(queue, job)
    return jobs


class Gauge:
    """A handler that sleeps and records how many copies of it run at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.now, self.peak, self.done = seconds, 0, 0, 0

    async def __call__(self, job: Job) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await anyio.sleep(self.seconds)
        finally:
            self.now -= 1
        self.done += 1


async def test_concurrency_never_exceeds_the_limit_and_reaches_it() -> None:
    queue, gauge = fast_queue(), Gauge(0.03)
    await enqueue(queue, 20)
    async with running(worker_on(queue, router_of(gauge), concurrency=4)):
        await eventually(lambda: queue.depth == 0)
    assert (gauge.peak, gauge.done) == (4, 20)


async def test_receive_asks_only_for_free_slots() -> None:
    queue, gauge = RecordingQueue(wait=timedelta(seconds=0.02)), Gauge(0.02)
    await enqueue(queue, 30)
    worker = worker_on(queue, router_of(gauge), concurrency=5, receive_batch=3)
    queue.worker = worker
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert gauge.done == 30
    assert queue.asked
    assert all(1 <= asked <= min(3, 5 - busy) for asked, busy in queue.asked), queue.asked


async def test_a_job_longer_than_the_visibility_timeout_is_not_redelivered() -> None:
    queue, gauge = fast_queue(visibility=0.3), Gauge(1.0)
    await enqueue(queue, 1)
    worker = worker_on(queue, router_of(gauge), visibility_timeout=timedelta(seconds=0.3))
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert (gauge.done, gauge.peak) == (1, 1)
    assert await queue.count() == 0


async def test_one_heartbeat_renews_the_leases_that_are_due_together() -> None:
    queue, gauge = RecordingQueue(visibility_timeout=timedelta(seconds=0.3)), Gauge(1.0)
    await enqueue(queue, 6)
    visibility = timedelta(seconds=0.3)
    worker = worker_on(
        queue, router_of(gauge), concurrency=6, receive_batch=6, visibility_timeout=visibility
    )
    async with running(worker):
        await eventually(lambda: gauge.done == 6)
    assert gauge.peak == 6
    assert await queue.count() == 0
    # Six leases renewed about three times each, in far fewer calls than renewals.
    assert sum(queue.extended) >= 6
    assert len(queue.extended) <= sum(queue.extended) / 2


async def test_a_job_past_its_timeout_is_retried() -> None:
    queue, calls = fast_queue(), []

    async def slow_once(job: Job) -> None:
        calls.append(job.id)
        if len(calls) == 1:
            await anyio.sleep(10)

    await enqueue(queue, 1)
    worker = worker_on(queue, router_of(slow_once), job_timeout=timedelta(seconds=0.05))
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert len(calls) == 2
    assert await queue.count() == 0


async def test_a_job_whose_deliveries_crashed_is_dead_lettered_without_running() -> None:
    queue, calls = fast_queue(visibility=0.02), []

    async def handler(job: Job) -> None:
        calls.append(job.id)

    [job] = await enqueue(queue, 1)
    for _ in range(3):
        assert len(await queue.receive(1)) == 1
        await anyio.sleep(0.03)
    async with running(worker_on(queue, router_of(handler), max_attempts=3)):
        await eventually(lambda: queue.depth == 0)
    assert calls == []
    [dead] = await queue.list()
    assert (dead.job, dead.attempts) == (job, 4)
    assert dead.error == "crashed: 3 deliveries never finished"


async def test_shutdown_lets_an_in_flight_job_finish_and_acks_it() -> None:
    queue, gauge = fast_queue(), Gauge(0.3)
    await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(gauge))):
        await eventually(lambda: gauge.now == 1)
    assert gauge.done == 1
    assert (queue.depth, await queue.count()) == (0, 0)


async def test_shutdown_nacks_a_job_past_the_grace_with_zero_delay() -> None:
    queue, gauge = fast_queue(), Gauge(30)
    [job] = await enqueue(queue, 1)
    worker = worker_on(queue, router_of(gauge), shutdown_grace=timedelta(seconds=0.1))
    async with running(worker):
        await eventually(lambda: gauge.now == 1)
        cancelled_at = anyio.current_time()
    assert anyio.current_time() - cancelled_at < 1.0
    assert gauge.done == 0
    assert queue.jobs() == [job]
    [again] = await queue.receive(1)
    assert (again.job, again.attempts) == (job, 2)


async def test_a_poison_job_does_not_hold_up_healthy_jobs() -> None:
    queue, gauge = fast_queue(), Gauge(0.005)
    hung = anyio.Event()

    async def poison(job: Job) -> None:
        hung.set()
        await anyio.sleep(30)

    router = router_of(gauge)
    router.register("poison", poison)
    [bad] = await enqueue(queue, 1, "poison")
    await enqueue(queue, 20)
    worker = worker_on(queue, router, concurrency=2, shutdown_grace=timedelta(0))
    async with running(worker):
        await hung.wait()
        await eventually(lambda: gauge.done == 20, within=2)
        # The last ack may wait for its batch's linger.
        await eventually(lambda: queue.jobs() == [bad], within=2)


async def test_an_always_failing_job_ends_in_dead_letters_and_others_are_acked() -> None:
    queue, gauge = fast_queue(), Gauge(0.005)

    async def poison(job: Job) -> None:
        raise RuntimeError("boom")

    router = router_of(gauge)
    router.register("poison", poison)
    [bad] = await enqueue(queue, 1, "poison")
    await enqueue(queue, 10)
    async with running(worker_on(queue, router, max_attempts=3)):
        await eventually(lambda: queue.depth == 0)
    [dead] = await queue.list()
    assert (dead.job, dead.attempts, dead.error) == (bad, 3, "RuntimeError: boom")
    assert gauge.done == 10


async def test_a_permanent_error_is_dead_lettered_at_once() -> None:
    queue, calls = fast_queue(), []

    async def handler(job: Job) -> None:
        calls.append(job.id)
        raise InvalidJob("order_id missing")

    await enqueue(queue, 1)
    await enqueue(queue, 1, "nobody_handles_this")
    async with running(worker_on(queue, router_of(handler))):
        await eventually(lambda: queue.depth == 0)
    errors = sorted(d.error for d in await queue.list())
    assert errors == [
        "InvalidJob: order_id missing",
        "UnknownJobType: no handler registered for job type 'nobody_handles_this'",
    ]
    assert len(calls) == 1


async def test_retry_later_nacks_with_its_delay_not_the_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue, seen = fast_queue(), []

    async def handler(job: Job) -> None:
        seen.append(anyio.current_time())
        if len(seen) == 1:
            raise RetryLater(timedelta(seconds=0.3), "rate limited")

    await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(handler))):
        await eventually(lambda: queue.depth == 0)
    assert seen[1] - seen[0] >= 0.3
    [retry] = [r for r in caplog.records if r.message == "job.retry"]
    assert fields(retry, "delay", "error") == (0.3, "RetryLater: rate limited")


async def test_a_receive_error_is_logged_and_the_loop_goes_on_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue, gauge = RecordingQueue(wait=timedelta(seconds=0.02)), Gauge(0)
    queue.receive_failures = 2
    await enqueue(queue, 1)
    started = anyio.current_time()
    async with running(worker_on(queue, router_of(gauge))):
        await eventually(lambda: queue.depth == 0)
    # Two failed receives cost at most 10 + 20 ms of pause, not a second each.
    assert anyio.current_time() - started < 0.5
    failures = [r for r in caplog.records if r.message == "queue.receive_failed"]
    assert [fields(r, "error") for r in failures] == [("ConnectionError('queue unreachable')",)] * 2
    assert all(r.levelno == logging.ERROR for r in failures)
    assert gauge.done == 1


class FailingAcks(InMemoryQueue):
    """A queue whose acks fail: the job stays leased and comes back."""

    async def ack_many(self, messages: object) -> None:
        raise ConnectionError("ack lost")


async def test_a_failed_ack_is_logged_and_the_job_is_delivered_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = FailingAcks(visibility_timeout=timedelta(seconds=0.05), wait=timedelta(seconds=0.02))
    gauge = Gauge(0)
    await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(gauge))):
        await eventually(lambda: gauge.done >= 2)
    [first, *_] = [r for r in caplog.records if r.message == "queue.settle_failed"]
    assert fields(first, "error", "attempts") == ("ConnectionError('ack lost')", 1)


async def test_log_records_carry_the_job_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="skincare_core.jobs.worker")
    queue, calls = fast_queue(), []

    async def flaky(job: Job) -> None:
        calls.append(job.id)
        if len(calls) < 3:
            raise ConnectionError(f"try {len(calls)}")

    [job] = await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(flaky), max_attempts=5)):
        await eventually(lambda: queue.depth == 0)
    records = [r for r in caplog.records if r.name == "skincare_core.jobs.worker"]
    retries = [r for r in records if r.message == "job.retry"]
    assert [fields(r, "job_id", "type", "attempts", "delay", "error") for r in retries] == [
        (job.id, "work", 1, 0.0, "ConnectionError: try 1"),
        (job.id, "work", 2, 0.0, "ConnectionError: try 2"),
    ]
    assert all(r.levelno == logging.WARNING for r in retries)
    [done] = [r for r in records if r.message == "job.done"]
    assert fields(done, "job_id", "type", "attempts") == (job.id, "work", 3)


async def test_a_dead_letter_log_record_has_the_error(caplog: pytest.LogCaptureFixture) -> None:
    queue = fast_queue()

    async def broken(job: Job) -> None:
        raise InvalidJob("bad payload")

    [job] = await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(broken))):
        await eventually(lambda: queue.depth == 0)
    [dead] = [r for r in caplog.records if r.message == "job.dead_lettered"]
    assert fields(dead, "job_id", "type", "attempts", "error") == (
        job.id,
        "work",
        1,
        "InvalidJob: bad payload",
    )
    assert dead.levelno == logging.ERROR


@pytest.mark.parametrize("option", ["concurrency", "max_attempts", "receive_batch"])
def test_nonsense_settings_are_refused(option: str) -> None:
    with pytest.raises(ValueError, match=">= 1"):
        Worker(queue=fast_queue(), router=Router(), **{option: 0})  # type: ignore[arg-type]


async def test_retry_later_on_the_last_attempt_dead_letters_with_its_error() -> None:
    queue, calls = fast_queue(), []

    async def rate_limited(job: Job) -> None:
        calls.append(job.id)
        raise RetryLater(timedelta(0), "429 Too Many Requests")

    [job] = await enqueue(queue, 1)
    async with running(worker_on(queue, router_of(rate_limited), max_attempts=2)):
        await eventually(lambda: queue.depth == 0)
    assert len(calls) == 2
    [dead] = await queue.list()
    assert (dead.job, dead.attempts, dead.error) == (job, 2, "RetryLater: 429 Too Many Requests")


async def test_a_runner_whose_job_timed_out_goes_on_with_the_next_jobs() -> None:
    queue, gauge = fast_queue(), Gauge(0)

    async def hangs(job: Job) -> None:
        await anyio.sleep(10)

    router = router_of(gauge)
    router.register("hangs", hangs)
    [hung] = await enqueue(queue, 1, "hangs")
    await enqueue(queue, 5)
    worker = worker_on(
        queue, router, concurrency=1, max_attempts=1, job_timeout=timedelta(seconds=0.05)
    )
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert gauge.done == 5
    [dead] = await queue.list()
    assert (dead.job, dead.error) == (
        hung,
        "TimeoutError: ran longer than the job timeout of 0.05 s",
    )


async def test_deadlines_passing_between_two_clock_reads_do_not_stop_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On a loaded machine the clock moves between the timeout loop's reads: a deadline can be
    # past by the time the loop computes its next sleep, which must then be no sleep at all.
    queue, gauge = fast_queue(), Gauge(0)
    monkeypatch.setattr(worker_module, "_now", _JumpingClock(step=0.02))

    async def hangs(job: Job) -> None:
        await anyio.sleep(10)

    router = router_of(gauge)
    router.register("hangs", hangs)
    hung = await enqueue(queue, 6, "hangs")
    worker = worker_on(
        queue, router, concurrency=3, max_attempts=1, job_timeout=timedelta(seconds=0.05)
    )
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert sorted(dead.job.id for dead in await queue.list()) == sorted(j.id for j in hung)


class _JumpingClock:
    """A monotonic clock that also moves `step` seconds on every read."""

    def __init__(self, step: float) -> None:
        self._step, self._reads = step, 0

    def __call__(self) -> float:
        self._reads += 1
        return time.monotonic() + self._reads * self._step


class RoundTrips(InMemoryQueue):
    """Receives and batch acks that take `latency` each, as a network round trip does."""

    def __init__(self, latency: float = 0.02) -> None:
        super().__init__(wait=timedelta(seconds=0.05))
        self.latency = latency
        self.receiving = self.peak_receiving = 0
        self.ack_requests = 0
        self.acked: list[str] = []

    async def receive(self, max_messages: int = 1) -> list[Message]:
        self.receiving += 1
        self.peak_receiving = max(self.peak_receiving, self.receiving)
        try:
            await anyio.sleep(self.latency)
            return await super().receive(max_messages)
        finally:
            self.receiving -= 1

    async def ack_many(self, messages: Sequence[Message]) -> None:
        await self._request()
        self.acked.extend(message.job.id for message in messages)
        await super().ack_many(messages)

    async def _request(self) -> None:
        self.ack_requests += 1
        await anyio.sleep(self.latency)


def sleeping_router(seconds: float) -> Router:
    async def handler(job: Job) -> None:
        await anyio.sleep(seconds)

    router = Router()
    router.register("work", handler)
    return router


async def enqueue_all(queue: InMemoryQueue, count: int) -> list[Job]:
    jobs = [new_job("work", n=str(n)) for n in range(count)]
    await queue.enqueue_many([Envelope(job) for job in jobs])
    return jobs


async def test_with_a_backlog_several_claims_run_at_once() -> None:
    queue = RoundTrips()
    await enqueue_all(queue, 400)
    worker = worker_on(queue, sleeping_router(0.001), concurrency=40, receive_batch=5)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert queue.peak_receiving >= 4


async def test_an_idle_worker_keeps_one_claim_waiting() -> None:
    queue = RoundTrips()
    worker = worker_on(queue, sleeping_router(0), concurrency=40, receive_batch=5)
    async with running(worker):
        await anyio.sleep(0.3)
        await enqueue_all(queue, 3)
        await eventually(lambda: queue.depth == 0)
        await anyio.sleep(0.2)
    assert queue.peak_receiving == 1


async def test_finished_jobs_are_acked_in_batches() -> None:
    queue = RoundTrips()
    jobs = await enqueue_all(queue, 200)
    worker = worker_on(queue, sleeping_router(0), concurrency=20, receive_batch=10)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert sorted(queue.acked) == sorted(job.id for job in jobs)
    assert queue.ack_requests <= 200 / 5


async def test_a_stop_waits_for_the_acks_of_finished_jobs() -> None:
    queue, finished = RoundTrips(latency=0.1), []

    async def handler(job: Job) -> None:
        finished.append(job.id)

    router = Router()
    router.register("work", handler)
    await enqueue_all(queue, 10)
    async with running(worker_on(queue, router, concurrency=10)):
        await eventually(lambda: len(finished) == 10)
        assert queue.depth == 10
    assert queue.depth == 0


@settings(max_examples=25, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from(["ok", "slow", "fails"]), max_size=30),
    concurrency=st.integers(min_value=1, max_value=12),
    batch=st.integers(min_value=1, max_value=8),
)
async def test_every_job_that_finished_is_acked_once_and_no_other(
    outcomes: list[str], concurrency: int, batch: int
) -> None:
    queue = RoundTrips(latency=0.002)
    enqueued = await enqueue_all(queue, len(outcomes))
    jobs = {job.id: outcome for job, outcome in zip(enqueued, outcomes, strict=True)}

    async def handler(job: Job) -> None:
        if jobs[job.id] == "slow":
            await anyio.sleep(0.005)
        if jobs[job.id] == "fails":
            raise PermanentJobError("no")

    router = Router()
    router.register("work", handler)
    worker = worker_on(queue, router, concurrency=concurrency, receive_batch=batch)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert sorted(queue.acked) == sorted(i for i, outcome in jobs.items() if outcome != "fails")
    assert sorted(d.job.id for d in await queue.list()) == sorted(
        i for i, outcome in jobs.items() if outcome == "fails"
    )


class SlowRetries(InMemoryQueue):
    """A queue whose retries take half a second each, as a slow round trip does."""

    def __init__(self) -> None:
        super().__init__(wait=timedelta(seconds=0.02))
        self.retried_at: list[float] = []

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        await anyio.sleep(0.5)
        await super().retry_many(retries)
        self.retried_at.append(anyio.current_time())


async def test_a_runner_goes_on_while_its_last_job_is_being_settled() -> None:
    queue, started = SlowRetries(), dict[str, float]()

    async def fails_first(job: Job) -> None:
        started.setdefault(str(job.payload["n"]), anyio.current_time())
        if job.payload["n"] == "0" and len(started) == 1:
            raise ConnectionError("try again")

    await enqueue(queue, 2)
    async with running(worker_on(queue, router_of(fails_first), concurrency=1)):
        await eventually(lambda: len(queue.retried_at) == 1 and len(started) == 2)
    # The only runner started the second job while the first one's retry was on its way.
    assert started["1"] < queue.retried_at[0]
