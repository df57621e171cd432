"""Log fields bound while a job runs: its id, type and attempts, and what its handler parsed."""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.log_context import bind_fields, bound_fields, unbind_fields
from skincare_core.shop.handlers import OrderExpiryHandler
from skincare_core.shop.job_types import ORDER_EXPIRY, OrderJob
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import InMemoryDatabase
from tests.core.core_kit import run_as_worker
from tests.core.worker_kit import eventually, fast_queue, running, worker_on

pytestmark = pytest.mark.anyio


class BoundAtEmit(logging.Handler):
    """Remembers each line's message and the fields bound when it was logged."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[tuple[str, dict[str, object]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.getMessage(), dict(bound_fields())))


@pytest.fixture
def engine_lines() -> Iterator[BoundAtEmit]:
    handler = BoundAtEmit()
    logger = logging.getLogger("skincare_core.jobs.worker")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(previous)


def _fields(job: Job, attempts: int, **more: object) -> dict[str, object]:
    return {"job_id": job.id, "type": job.type, "attempts": attempts, **more}


def test_binding_adds_fields_and_unbinding_restores_the_previous_ones() -> None:
    def scenario() -> None:
        outer = bind_fields(request_id="r1")
        inner = bind_fields(order_id=7, request_id="r2")
        assert bound_fields() == {"request_id": "r2", "order_id": 7}
        unbind_fields(inner)
        assert bound_fields() == {"request_id": "r1"}
        unbind_fields(outer)
        assert bound_fields() == {}

    contextvars.copy_context().run(scenario)
    assert bound_fields() == {}


async def test_a_handler_and_its_threads_see_the_job_fields_on_every_attempt() -> None:
    queue, seen = fast_queue(), []

    async def handler(job: Job) -> None:
        seen.append(dict(bound_fields()))
        seen.append(await anyio.to_thread.run_sync(lambda: dict(bound_fields())))
        if len(seen) < 4:
            raise ConnectionError("try again")

    router = Router()
    router.register("work", handler)
    job = new_job("work")
    await enqueue_job(queue, job)
    async with running(worker_on(queue, router, concurrency=1)):
        await eventually(lambda: len(seen) == 4 and queue.depth == 0)
    assert seen == [_fields(job, 1)] * 2 + [_fields(job, 2)] * 2
    assert bound_fields() == {}


async def test_settlement_lines_carry_the_fields_and_the_next_job_starts_clean(
    engine_lines: BoundAtEmit,
) -> None:
    queue, seen = fast_queue(), []

    async def handler(job: Job) -> None:
        seen.append(dict(bound_fields()))
        bind_fields(order_id=int(str(job.payload["order_id"])))
        if job.payload["order_id"] == "1":
            raise ConnectionError("try again")

    router = Router()
    router.register("work", handler)
    first, second = new_job("work", order_id="1"), new_job("work", order_id="2")
    await enqueue_job(queue, first)
    await enqueue_job(queue, second)
    async with running(worker_on(queue, router, concurrency=1, max_attempts=1)):
        await eventually(lambda: queue.depth == 0 and len(engine_lines.lines) == 2)
    assert seen == [_fields(first, 1), _fields(second, 1)]
    assert engine_lines.lines == [
        ("job.dead_lettered", _fields(first, 1, order_id=1)),
        ("job.done", _fields(second, 1, order_id=2)),
        ("worker.draining", {}),
    ]


async def test_the_shop_binds_the_identities_its_handlers_read() -> None:
    seen: list[dict[str, object]] = []

    class Expiry(OrderExpiryHandler):
        async def __call__(self, args: OrderJob) -> None:
            with contextlib.suppress(Exception):
                await super().__call__(args)
            seen.append(dict(bound_fields()))

    run = run_as_worker(ORDER_EXPIRY, Expiry(uow=InMemoryDatabase(outbox_sink=InMemoryQueue())))
    await contextvars.copy_context().run(lambda: run(new_job("expire_unpaid_order", order_id="42")))
    assert seen == [{"order_id": 42}]
