"""Per-type execution timeouts: a hung handler is cancelled at its own type's timeout (not the
worker's), the attempt counts, and it is retried per its type's retry policy."""

from __future__ import annotations

import time
from datetime import timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.retry import RetryPolicy
from skincare_core.jobs.router import Router
from tests.core.worker_kit import eventually, fast_queue, running, worker_on

pytestmark = pytest.mark.anyio
_SHORT = timedelta(seconds=0.05)


def _router(ran: dict[str, list[float]], sleeps: dict[str, float]) -> Router:
    router = Router()
    for job_type, seconds in sleeps.items():

        async def handler(job: Job, seconds: float = seconds) -> None:
            began = time.monotonic()
            try:
                await anyio.sleep(seconds)
            finally:
                ran.setdefault(job.type, []).append(time.monotonic() - began)

        router.register(job_type, handler)
    return router


async def test_a_hung_handler_is_cancelled_at_its_types_timeout_and_retried_per_its_policy() -> (
    None
):
    queue, ran = fast_queue(), dict[str, list[float]]()
    router = _router(ran, {"hangs": 60.0, "slow": 0.2})
    policy = RetryPolicy(attempts=3, base=timedelta(milliseconds=1), cap=timedelta(seconds=0.01))
    worker = worker_on(
        queue,
        router,
        concurrency=2,
        job_timeout=timedelta(seconds=30),
        job_timeouts={"hangs": _SHORT},
        retry_policies={"hangs": policy},
    )
    hung, slow = new_job("hangs"), new_job("slow")
    await enqueue(queue, hung)
    await enqueue(queue, slow)
    async with running(worker):
        await eventually(lambda: queue.depth == 0)
    [dead] = await queue.list()
    assert (dead.job, dead.attempts) == (hung, 3)
    assert dead.error == "TimeoutError: ran longer than the job timeout of 0.05 s"
    assert len(ran["hangs"]) == 3
    assert max(ran["hangs"]) < 1.0
    # The slow type has the worker's timeout: it ran to its end, once.
    assert len(ran["slow"]) == 1
    assert ran["slow"][0] >= 0.2


async def test_a_short_timeout_is_kept_while_a_long_one_runs() -> None:
    # The watchdog sleeps toward the long job's deadline; the short job starting after it
    # must still be stopped at its own.
    queue, ran = fast_queue(), dict[str, list[float]]()
    router = _router(ran, {"long": 60.0, "short": 60.0})
    worker = worker_on(
        queue,
        router,
        concurrency=2,
        max_attempts=1,
        job_timeout=timedelta(seconds=1),
        job_timeouts={"short": _SHORT},
    )
    await enqueue(queue, new_job("long"))
    async with running(worker):
        await anyio.sleep(0.1)
        await enqueue(queue, new_job("short"))
        await eventually(lambda: "short" in ran, within=0.8)
    assert ran["short"][0] < 0.5


@given(
    timeouts=st.dictionaries(
        st.sampled_from(["a", "b", "c"]), st.integers(-2, 5).map(lambda s: timedelta(seconds=s))
    )
)
@settings(max_examples=30)
def test_every_job_timeout_must_be_positive(timeouts: dict[str, timedelta]) -> None:
    queue = fast_queue()
    if all(t > timedelta(0) for t in timeouts.values()):
        worker_on(queue, Router(), job_timeouts=timeouts)
    else:
        with pytest.raises(ValueError, match="must be positive"):
            worker_on(queue, Router(), job_timeouts=timeouts)
