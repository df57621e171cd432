"""The worker serves typed definitions: their handlers (async on the loop, sync in threads),
their retry policies and timeouts, and dead-letters a payload that does not fit at once."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta

import anyio
import pytest
from attrs import frozen
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs import (
    Definitions,
    Job,
    JobDefinition,
    RetryPolicy,
    Router,
    Worker,
    enqueue,
)
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.worker_kit import NO_BACKOFF, eventually, fast_queue, running

pytestmark = pytest.mark.anyio
ONE_TRY = RetryPolicy(attempts=1, base=timedelta(seconds=1), cap=timedelta(seconds=1))
FAST_RETRIES = RetryPolicy(
    attempts=5, base=timedelta(milliseconds=1), cap=timedelta(milliseconds=1)
)


@frozen
class Stock:
    product_id: int
    warehouse: str = "main"


def typed_worker(
    queue: InMemoryQueue, *definitions: JobDefinition[Stock], **options: object
) -> Worker:
    return Worker(
        queue=queue,
        definitions=Definitions(*definitions),
        visibility_timeout=timedelta(seconds=5),
        shutdown_grace=timedelta(seconds=2),
        backoff=NO_BACKOFF,
        **options,  # type: ignore[arg-type] # each test's few options
    )


async def test_an_async_handler_gets_its_typed_arguments() -> None:
    seen: list[Stock] = []

    async def sync_stock(args: Stock) -> None:
        seen.append(args)

    stock = JobDefinition("sync_stock", Stock, sync_stock)
    queue = fast_queue()
    await enqueue(queue, stock.job(Stock(42, "east")))
    async with running(typed_worker(queue, stock)):
        await eventually(lambda: seen == [Stock(42, "east")])
        await eventually(lambda: queue.depth == 0)


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from(
        [
            ({}, "product_id: required field missing"),
            ({"product_id": "42"}, "product_id: expected an integer, got str"),
            ({"product_id": True}, "product_id: expected an integer, got bool"),
            ({"product_id": 1, "colour": "red"}, r"extra fields found \(colour\)"),
            ({"product_id": 1, "warehouse": 7}, "warehouse: expected a string, got int"),
        ]
    )
)
def test_a_payload_that_does_not_fit_is_dead_lettered_once_naming_the_field(
    case: tuple[dict[str, object], str],
) -> None:
    payload, reason = case
    calls: list[Stock] = []

    async def handler(args: Stock) -> None:
        calls.append(args)

    async def scenario() -> None:
        queue = fast_queue()
        stock = JobDefinition(
            "sync_stock", Stock, handler, retry=RetryPolicy(5, timedelta(1), timedelta(1))
        )
        await enqueue(queue, Job("j1", "sync_stock", payload))  # type: ignore[arg-type] # a third party's
        async with running(typed_worker(queue, stock)):
            await eventually(lambda: queue.depth == 0)
        [dead] = await queue.list()
        assert dead.attempts == 1
        assert dead.error.startswith("InvalidJob: arguments of job type 'sync_stock' do not fit")
        assert re.search(reason, dead.error)
        assert calls == []

    anyio.run(scenario)


async def test_a_definitions_retry_policy_and_timeout_are_the_workers() -> None:
    started: list[float] = []

    async def hang(args: Stock) -> None:
        started.append(time.monotonic())
        await anyio.sleep(10)

    stock = JobDefinition(
        "sync_stock",
        Stock,
        hang,
        retry=RetryPolicy(
            attempts=2, base=timedelta(milliseconds=1), cap=timedelta(milliseconds=1)
        ),
        timeout=timedelta(seconds=0.05),
    )
    queue = fast_queue()
    await enqueue(queue, stock.job(Stock(1)))
    # The worker's own timeout is long: the definition's is the one that counts.
    async with running(typed_worker(queue, stock, job_timeout=timedelta(minutes=5))):
        await eventually(lambda: queue.depth == 0)
    [dead] = await queue.list()
    assert (dead.attempts, dead.error) == (
        2,
        "TimeoutError: ran longer than the job timeout of 0.05 s",
    )


async def test_per_type_timeouts_stop_only_the_late_job() -> None:
    done: list[str] = []

    async def slow(args: Stock) -> None:
        await anyio.sleep(0.3)
        done.append(args.warehouse)

    patient = JobDefinition("patient", Stock, slow, timeout=timedelta(seconds=5))
    hasty = JobDefinition("hasty", Stock, slow, timeout=timedelta(seconds=0.1), retry=ONE_TRY)
    queue = fast_queue()
    await enqueue(queue, patient.job(Stock(1, "patient")))
    await enqueue(queue, hasty.job(Stock(1, "hasty")))
    async with running(typed_worker(queue, patient, hasty)):
        await eventually(lambda: queue.depth == 0)
    assert done == ["patient"]
    [dead] = await queue.list()
    assert dead.job.type == "hasty"


async def test_a_router_and_definitions_are_served_together_and_clashes_refused() -> None:
    legacy: list[str] = []

    async def old_style(job: Job) -> None:
        legacy.append(str(job.payload["n"]))

    async def typed(args: Stock) -> None:
        legacy.append(f"typed {args.product_id}")

    router = Router()
    router.register("old", old_style)
    stock = JobDefinition("sync_stock", Stock, typed, retry=ONE_TRY)
    queue = fast_queue()
    await enqueue(queue, Job("o", "old", {"n": "1"}))
    await enqueue(queue, stock.job(Stock(2)))
    worker = Worker(queue=queue, router=router, definitions=Definitions(stock))
    async with running(worker):
        await eventually(lambda: sorted(legacy) == ["1", "typed 2"])
    # The router given is not changed: another worker may share it.
    assert router.job_types == {"old"}
    with pytest.raises(ValueError, match="retry policy given to the worker and by a definition"):
        Worker(queue=queue, definitions=Definitions(stock), retry_policies={"sync_stock": ONE_TRY})
    with pytest.raises(ValueError, match="router or definitions"):
        Worker(queue=queue)
    with pytest.raises(ValueError, match="has no handler"):
        Worker(queue=queue, definitions=Definitions(JobDefinition("bare", Stock)))


async def test_a_sync_handler_runs_in_a_thread_not_on_the_loop() -> None:
    threads: list[str] = []
    loop_thread = threading.current_thread().name

    def blocking(args: Stock) -> None:
        time.sleep(0.05)  # a blocking library call
        threads.append(threading.current_thread().name)

    stock = JobDefinition("blocking", Stock, blocking)
    queue = fast_queue()
    for n in range(4):
        await enqueue(queue, stock.job(Stock(n)))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.005)
            ticks += 1

    async with anyio.create_task_group() as tg, running(typed_worker(queue, stock, concurrency=4)):
        tg.start_soon(tick)
        await eventually(lambda: len(threads) == 4)
        tg.cancel_scope.cancel()
    assert loop_thread not in threads
    # The loop kept running while the threads blocked.
    assert ticks >= 5


async def test_sync_handlers_run_at_most_sync_threads_at_once() -> None:
    running_now, peak = 0, 0
    lock = threading.Lock()

    def blocking(args: Stock) -> None:
        nonlocal running_now, peak
        with lock:
            running_now += 1
            peak = max(peak, running_now)
        time.sleep(0.03)
        with lock:
            running_now -= 1

    stock = JobDefinition("blocking", Stock, blocking)
    queue = fast_queue()
    for n in range(12):
        await enqueue(queue, stock.job(Stock(n)))
    async with running(typed_worker(queue, stock, concurrency=8, sync_threads=2)):
        await eventually(lambda: queue.depth == 0)
    assert peak == 2


async def test_a_timed_out_sync_handler_is_retried_while_its_thread_runs_out() -> None:
    finished = threading.Event()
    release = threading.Event()
    attempts: list[int] = []

    def stuck(args: Stock) -> None:
        attempts.append(args.product_id)
        if len(attempts) == 1:
            release.wait(5)  # the first attempt hangs past its timeout
            finished.set()

    stock = JobDefinition(
        "stuck",
        Stock,
        stuck,
        timeout=timedelta(seconds=0.05),
        retry=RetryPolicy(
            attempts=3, base=timedelta(milliseconds=1), cap=timedelta(milliseconds=1)
        ),
    )
    queue = fast_queue()
    await enqueue(queue, stock.job(Stock(7)))
    async with running(typed_worker(queue, stock)):
        # The second attempt ran and finished while the first thread still blocks.
        await eventually(lambda: queue.depth == 0)
        assert attempts == [7, 7]
        assert not finished.is_set()
        release.set()
        await anyio.to_thread.run_sync(finished.wait, 5)
    assert await queue.list() == []
