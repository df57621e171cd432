"""Property tests of retries through the real Worker: k failures then success, or always failing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Retry
from skincare_core.jobs.router import Router
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.worker_kit import eventually, running, worker_on

pytestmark = pytest.mark.anyio
RETRY_SETTINGS = settings(max_examples=15, deadline=None)


class SettleLog(InMemoryQueue):
    """An InMemoryQueue that records every ack and nack the worker makes."""

    def __init__(self) -> None:
        super().__init__(wait=timedelta(seconds=0.02))
        self.acks: list[int] = []
        self.nacks: list[tuple[int, timedelta]] = []

    async def ack_many(self, messages: Sequence[Message]) -> None:
        self.acks.extend(m.attempts for m in messages)
        await super().ack_many(messages)

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        self.nacks.extend((r.message.attempts, r.delay) for r in retries)
        await super().retry_many(retries)


class Flaky:
    """Fails its first `failures` calls, then succeeds (never, when failures is None)."""

    def __init__(self, failures: int | None) -> None:
        self.failures, self.calls = failures, 0

    async def __call__(self, job: Job) -> None:
        self.calls += 1
        if self.failures is None or self.calls <= self.failures:
            raise ConnectionError(f"failure {self.calls}")


class RecordingBackoff:
    """A backoff that records which attempts asked for a delay and answers zero."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def __call__(self, attempts: int) -> timedelta:
        self.asked.append(attempts)
        return timedelta(0)


async def run_until_settled(
    failures: int | None, max_attempts: int
) -> tuple[SettleLog, Flaky, RecordingBackoff]:
    queue, handler, backoff = SettleLog(), Flaky(failures), RecordingBackoff()
    router = Router()
    router.register("flaky", handler)
    await enqueue_job(queue, new_job("flaky"))
    worker = worker_on(queue, router, max_attempts=max_attempts, backoff=backoff)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    return queue, handler, backoff


@RETRY_SETTINGS
@given(data=st.data(), max_attempts=st.integers(min_value=1, max_value=6))
async def test_k_failures_then_success_is_acked_once_after_k_retries(
    data: st.DataObject, max_attempts: int
) -> None:
    k = data.draw(st.integers(min_value=0, max_value=max_attempts - 1), label="k")
    queue, handler, backoff = await run_until_settled(k, max_attempts)
    assert backoff.asked == list(range(1, k + 1))
    assert queue.nacks == [(n, timedelta(0)) for n in range(1, k + 1)]
    assert queue.acks == [k + 1]
    assert handler.calls == k + 1
    assert await queue.count() == 0


@RETRY_SETTINGS
@given(max_attempts=st.integers(min_value=1, max_value=6))
async def test_an_always_failing_job_dies_after_max_attempts_with_its_last_error(
    max_attempts: int,
) -> None:
    queue, handler, backoff = await run_until_settled(None, max_attempts)
    assert handler.calls == max_attempts
    assert backoff.asked == list(range(1, max_attempts))
    assert queue.acks == []
    [dead] = await queue.list()
    assert (dead.attempts, dead.error) == (max_attempts, f"ConnectionError: failure {max_attempts}")
