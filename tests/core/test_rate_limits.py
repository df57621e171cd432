"""Rate limits on a fake clock: the limiter's windows and the throttle's waits."""

from __future__ import annotations

import math
import time
from collections import Counter
from datetime import timedelta

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs import Job, RateLimit, Router, Throttle, Worker, new_job, throttled
from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.testing.jobs import InMemoryQueue, InMemoryRateLimiter

pytestmark = pytest.mark.anyio


class FakeTime:
    """Seconds that move only when the throttle sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


@given(per_second=st.integers(1, 20), asks=st.lists(st.integers(1, 10), max_size=30))
async def test_a_window_never_grants_more_than_the_limit(per_second: int, asks: list[int]) -> None:
    limiter = InMemoryRateLimiter(clock=lambda: 5.5)
    granted = [await limiter.acquire("q", wanted, per_second) for wanted in asks]
    assert sum(granted) == min(sum(asks), per_second)
    assert all(0 <= g <= w for g, w in zip(granted, asks, strict=True))


async def test_throttle_spreads_starts_over_seconds() -> None:
    time = FakeTime()
    limiter = InMemoryRateLimiter(clock=time)
    throttle = Throttle(limiter, RateLimit("default", 3), clock=time, sleep=time.sleep)
    starts = []
    for _ in range(10):
        await throttle.take(1)
        starts.append(int(time.now))
    assert starts == [1000] * 3 + [1001] * 3 + [1002] * 3 + [1003]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RateLimit("default", 0)


async def test_a_throttled_worker_uses_no_attempts_and_keeps_the_rate() -> None:
    queue = InMemoryQueue(wait=timedelta(seconds=0.05))
    for n in range(8):
        await enqueue_job(queue, new_job("mail", n=str(n)))
    started: list[float] = []
    all_started = anyio.Event()

    async def handle(_job: Job) -> None:
        started.append(time.time())
        if len(started) == 8:
            all_started.set()

    router = Router()
    router.register("mail", handle)
    throttle = Throttle(InMemoryRateLimiter(), RateLimit("default", 5))
    worker = Worker(queue=queue, router=router, concurrency=4, throttle=throttle)
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            await all_started.wait()
            tg.cancel_scope.cancel()
    assert len(started) == 8
    assert max(Counter(math.floor(t) for t in started).values()) <= 5
    assert await queue.count() == 0


@given(per_second=st.integers(1, 5), jobs=st.integers(1, 12))
async def test_a_throttled_job_type_starts_at_most_its_limit_each_second(
    per_second: int, jobs: int
) -> None:
    time = FakeTime()
    throttle = Throttle(
        InMemoryRateLimiter(clock=time),
        RateLimit("type:sms", per_second),
        clock=time,
        sleep=time.sleep,
    )
    started: list[int] = []

    async def send(_job: Job) -> None:
        started.append(math.floor(time.now))

    limited = throttled(send, throttle)

    async def run(job: Job) -> None:
        await limited(job)

    async with anyio.create_task_group() as tg:
        for n in range(jobs):
            tg.start_soon(run, new_job("sms", n=str(n)))
    assert len(started) == jobs
    assert max(Counter(started).values()) <= per_second
    # No second is skipped: the waiting jobs start as soon as a window opens.
    assert len(set(started)) == math.ceil(jobs / per_second)


async def test_a_worker_limits_one_job_type_and_not_the_others_of_its_queue() -> None:
    queue = InMemoryQueue(wait=timedelta(seconds=0.05))
    for n in range(6):
        await enqueue_job(queue, new_job("sms", n=str(n)))
        await enqueue_job(queue, new_job("mail", n=str(n)))
    started: dict[str, list[float]] = {"sms": [], "mail": []}
    all_started = anyio.Event()

    async def handle(job: Job) -> None:
        started[job.type].append(time.time())
        if sum(map(len, started.values())) == 12:
            all_started.set()

    router = Router()
    router.register("sms", handle)
    router.register("mail", handle)
    router.wrap(
        "sms", lambda h: throttled(h, Throttle(InMemoryRateLimiter(), RateLimit("type:sms", 3)))
    )
    worker = Worker(queue=queue, router=router, concurrency=12)
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            await all_started.wait()
            tg.cancel_scope.cancel()
    assert max(Counter(math.floor(t) for t in started["sms"]).values()) <= 3
    assert max(started["mail"]) - min(started["mail"]) < 0.5
    assert await queue.count() == 0
