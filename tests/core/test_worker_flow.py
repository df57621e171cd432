"""How jobs flow through the Worker: claims that follow the free slots, acks in batches."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.router import Router
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.worker_kit import eventually, running, worker_on

pytestmark = pytest.mark.anyio


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


async def enqueue(queue: InMemoryQueue, count: int) -> list[Job]:
    jobs = [new_job("work", n=str(n)) for n in range(count)]
    await queue.enqueue_many([Envelope(job) for job in jobs])
    return jobs


async def test_with_a_backlog_several_claims_run_at_once() -> None:
    queue = RoundTrips()
    await enqueue(queue, 400)
    worker = worker_on(queue, sleeping_router(0.001), concurrency=40, receive_batch=5)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    assert queue.peak_receiving >= 4


async def test_an_idle_worker_keeps_one_claim_waiting() -> None:
    queue = RoundTrips()
    worker = worker_on(queue, sleeping_router(0), concurrency=40, receive_batch=5)
    async with running(worker):
        await anyio.sleep(0.3)
        await enqueue(queue, 3)
        await eventually(lambda: queue.depth == 0)
        await anyio.sleep(0.2)
    assert queue.peak_receiving == 1


async def test_finished_jobs_are_acked_in_batches() -> None:
    queue = RoundTrips()
    jobs = await enqueue(queue, 200)
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
    await enqueue(queue, 10)
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
    enqueued = await enqueue(queue, len(outcomes))
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
