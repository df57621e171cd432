"""Time one Worker draining no-op jobs already on a queue (the Postgres and SQS benchmarks)."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

from skincare_core.jobs.job import Job
from skincare_core.jobs.metrics import JobMetrics
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker


def _nothing() -> None:
    """The default `on_done`."""


async def drain_seconds(
    queue: Queue,
    count: int,
    *,
    concurrency: int,
    batch: int,
    on_done: Callable[[], None] = _nothing,
    metrics: JobMetrics | None = None,
) -> float:
    """Seconds until a Worker has handled `count` "noop" jobs; `on_done` runs before it stops.
    `metrics` is the worker's (None: it counts nothing)."""
    done, seen = anyio.Event(), 0

    async def noop(job: Job) -> None:
        nonlocal seen
        seen += 1
        if seen == count:
            done.set()

    router = Router()
    router.register("noop", noop)
    worker = Worker(
        queue=queue, router=router, concurrency=concurrency, receive_batch=batch, metrics=metrics
    )
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        await done.wait()
        elapsed = time.perf_counter() - start
        on_done()
        tg.cancel_scope.cancel()
    return elapsed
