"""Core's Worker on SqsQueue: the heartbeat keeps a long job's lease; failures reach the DLQ."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_sqs import SqsQueue

pytestmark = pytest.mark.anyio


def _queue(client: Any, urls: Any) -> SqsQueue:
    return SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1)


@pytest.mark.slow
async def test_a_job_longer_than_the_visibility_is_not_received_twice_while_it_runs(
    sqs_client: Any, fresh_queues: Callable[..., Any]
) -> None:
    urls = fresh_queues(visibility_timeout=2)
    worker_queue, other = _queue(sqs_client, urls), _queue(sqs_client, urls)
    runs: list[str] = []
    started, finished = anyio.Event(), anyio.Event()

    async def slow(job: Job) -> None:
        runs.append(job.id)
        started.set()
        await anyio.sleep(5)
        finished.set()

    router = Router()
    router.register("slow", slow)
    worker = Worker(queue=worker_queue, router=router, visibility_timeout=timedelta(seconds=2))
    await enqueue(worker_queue, new_job("slow"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        await started.wait()
        stolen = []
        with anyio.move_on_after(8):
            while not finished.is_set():
                stolen += await other.receive(10)
        tg.cancel_scope.cancel()
    assert finished.is_set()
    assert stolen == []
    assert len(runs) == 1
    assert await other.receive(10) == []


async def test_a_permanent_failure_is_dead_lettered_with_its_reason(
    sqs_client: Any, fresh_queues: Callable[..., Any]
) -> None:
    queue = _queue(sqs_client, fresh_queues(visibility_timeout=5))

    async def broken(job: Job) -> None:
        raise PermanentJobError("order 9 is gone")

    router = Router()
    router.register("broken", broken)
    job = new_job("broken", order_id="9")
    await enqueue(queue, job)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Worker(queue=queue, router=router).run)
        with anyio.fail_after(10):
            while await queue.dead_letters.count() == 0:  # noqa: ASYNC110 - polling SQS, nothing to wait on
                await anyio.sleep(0.1)
        tg.cancel_scope.cancel()
    [dead] = await queue.dead_letters.list()
    assert (dead.job, dead.attempts, dead.error) == (job, 1, "PermanentJobError: order 9 is gone")
