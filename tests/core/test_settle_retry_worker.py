"""The Worker when its queue cannot settle for a while (`Unavailable`): finished jobs are acked
once the queue is back instead of waiting out their lease and running again; failed ones are
nacked or dead-lettered the same way; slots stay taken meanwhile; a stop waits up to its grace."""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import timedelta

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from tests.core.outage_kit import Outage, OutageQueue
from tests.core.worker_kit import eventually, running, worker_on
from tests.log_records import fields

pytestmark = pytest.mark.anyio


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
