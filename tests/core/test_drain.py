"""The test drain (`skincare_core.testing.drain`): due jobs run inline through the handlers and
each run says what became of it, under the worker's retry rules, on a clock the test moves."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs import (
    Definitions,
    Envelope,
    Job,
    JobDefinition,
    PermanentJobError,
    RetryPolicy,
    Router,
    Snooze,
    enqueue,
    new_job,
)
from skincare_core.testing.drain import JobDrain, JobRun

pytestmark = pytest.mark.anyio


class Flaky:
    """Fails its first `failures` calls, then succeeds; enqueues `then` (if any) on success."""

    def __init__(self, failures: int = 0, then: tuple[JobDrain, Job] | None = None) -> None:
        self.failures = failures
        self.calls = 0
        self.then = then

    async def __call__(self, job: Job) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"warehouse down ({self.calls})")
        if self.then is not None:
            drain, follow_up = self.then
            await drain.enqueue(Envelope(follow_up))


def router_of(**handlers: Flaky) -> Router:
    router = Router()
    for job_type, handler in handlers.items():
        router.register(job_type, handler)
    return router


@pytest.fixture
def job_handlers() -> Router:
    """The handlers the plugin's `job_drain` fixture runs jobs through."""
    return router_of(sync_warehouse_stock=Flaky())


async def test_the_fixture_drains_what_the_code_under_test_enqueued(job_drain: JobDrain) -> None:
    job = new_job("sync_warehouse_stock", product_id="42")
    await enqueue(job_drain.queue(), job)
    assert await job_drain.drain() == [JobRun(job, "default", 1, "done")]
    assert await job_drain.drain() == []


async def test_a_failed_run_is_retried_with_its_error_once_its_backoff_has_passed() -> None:
    drain = JobDrain(router_of(t=Flaky(failures=1)), backoff=lambda n: timedelta(seconds=10))
    job = new_job("t")
    await drain.enqueue(Envelope(job))
    assert await drain.drain() == [
        JobRun(
            job,
            "default",
            1,
            "retried",
            "ConnectionError: warehouse down (1)",
            timedelta(seconds=10),
        )
    ]
    drain.advance(timedelta(seconds=9))
    assert await drain.drain() == []
    drain.advance(timedelta(seconds=1))
    assert await drain.drain() == [JobRun(job, "default", 2, "done")]


async def test_the_last_attempt_and_a_permanent_error_are_dead_with_their_error() -> None:
    async def refuse(job: Job) -> None:
        raise PermanentJobError("no such product")

    router = router_of(flaky=Flaky(failures=9))
    router.register("refused", refuse)
    policy = RetryPolicy(attempts=2, base=timedelta(seconds=1), cap=timedelta(seconds=1))
    drain = JobDrain(router, retry_policies={"flaky": policy})
    flaky, refused = new_job("flaky"), new_job("refused")
    await drain.enqueue(Envelope(flaky))
    await drain.enqueue(Envelope(refused))
    first = await drain.drain()
    assert [(r.job, r.outcome) for r in first] == [(flaky, "retried"), (refused, "dead")]
    assert first[1].error == "PermanentJobError: no such product"
    drain.advance(timedelta(seconds=1))
    assert await drain.drain() == [
        JobRun(flaky, "default", 2, "dead", "ConnectionError: warehouse down (2)")
    ]
    assert {d.job.id for d in await drain.queues.list()} == {flaky.id, refused.id}


async def test_a_delayed_job_waits_for_the_clock_and_follow_ups_run_in_the_same_drain() -> None:
    router = Router()
    drain = JobDrain(router)
    sync, follow_up = new_job("sync"), new_job("notify")
    router.register("sync", Flaky(then=(drain, follow_up)))
    router.register("notify", Flaky())
    await drain.enqueue(Envelope(sync, queue="bulk", delay=timedelta(hours=1)))
    assert await drain.drain() == []
    drain.advance(timedelta(hours=1))
    assert [(r.job, r.queue) for r in await drain.drain()] == [
        (sync, "bulk"),
        (follow_up, "default"),
    ]


async def test_a_run_past_the_job_timeout_is_retried_as_timed_out() -> None:
    async def stuck(job: Job) -> None:
        await anyio.sleep(10)

    router = Router()
    router.register("stuck", stuck)
    drain = JobDrain(router, job_timeout=timedelta(seconds=0.05))
    await drain.enqueue(Envelope(new_job("stuck")))
    [run] = await drain.drain()
    assert (run.outcome, run.error) == (
        "retried",
        "TimeoutError: ran longer than the job timeout of 0.05 s",
    )


@given(failures=st.integers(0, 6), attempts=st.integers(1, 5), jitter=st.booleans())
async def test_a_job_failing_k_times_is_retried_then_done_or_dead_by_its_policy(
    failures: int, attempts: int, jitter: bool
) -> None:
    policy = RetryPolicy(attempts, timedelta(seconds=1), timedelta(minutes=1), jitter=jitter)
    drain = JobDrain(router_of(t=Flaky(failures)), retry_policies={"t": policy})
    await drain.enqueue(Envelope(new_job("t")))
    runs = await drain.drain()
    while runs[-1].outcome == "retried":
        assert runs[-1].again_in is not None
        assert runs[-1].again_in <= timedelta(minutes=1)
        drain.advance(runs[-1].again_in)
        runs += await drain.drain()
    tried = min(failures, attempts - 1)
    last = "done" if failures < attempts else "dead"
    assert [r.outcome for r in runs] == ["retried"] * tried + [last]
    assert [r.attempt for r in runs] == list(range(1, len(runs) + 1))
    assert drain.queue().depth == 0


@given(delay=st.integers(0, 100), steps=st.lists(st.integers(0, 30), min_size=1, max_size=8))
async def test_a_delayed_job_runs_in_the_first_drain_after_its_delay_has_passed(
    delay: int, steps: list[int]
) -> None:
    drain = JobDrain(router_of(t=Flaky()))
    await drain.enqueue(Envelope(new_job("t"), delay=timedelta(seconds=delay)))
    passed, ran_at = 0, None
    for step in [0, *steps]:
        drain.advance(timedelta(seconds=step))
        passed += step
        if await drain.drain():
            assert ran_at is None
            ran_at = passed
    expected = next((t for t in _running_sums([0, *steps]) if t >= delay), None)
    assert ran_at == expected


def _running_sums(steps: list[int]) -> list[int]:
    sums, total = [], 0
    for step in steps:
        total += step
        sums.append(total)
    return sums


@frozen
class SyncStock:
    product_id: int


class Warehouse:
    """Records each product synced; snoozes while `busy` is positive (counting down)."""

    def __init__(self, busy: int = 0) -> None:
        self.synced: list[int] = []
        self.busy = busy

    async def sync(self, args: SyncStock) -> None:
        if self.busy:
            self.busy -= 1
            raise Snooze(timedelta(minutes=10), "warehouse busy")
        self.synced.append(args.product_id)


def sync_stock(warehouse: Warehouse) -> JobDefinition[SyncStock]:
    return JobDefinition("sync_warehouse_stock", SyncStock, warehouse.sync, queue="bulk")


async def test_definitions_run_typed_and_a_payload_that_does_not_fit_is_dead() -> None:
    warehouse = Warehouse()
    drain = JobDrain(Definitions(sync_stock(warehouse)))
    await drain.enqueue(sync_stock(warehouse).job(SyncStock(product_id=42)))
    await drain.enqueue(Envelope(new_job("sync_warehouse_stock", product_id="x"), queue="bulk"))
    done, dead = await drain.drain()
    assert (done.outcome, dead.outcome, warehouse.synced) == ("done", "dead", [42])
    assert dead.error is not None
    assert "product_id" in dead.error


async def test_a_snoozed_job_is_due_again_after_its_delay() -> None:
    warehouse = Warehouse(busy=1)
    drain = JobDrain(Definitions(sync_stock(warehouse)))
    await drain.enqueue(sync_stock(warehouse).job(SyncStock(product_id=7)))
    [snoozed] = await drain.drain()
    assert (snoozed.outcome, snoozed.again_in) == ("snoozed", timedelta(minutes=10))
    drain.advance(timedelta(minutes=10))
    assert [(run.attempt, run.outcome) for run in await drain.drain()] == [(1, "done")]
    assert warehouse.synced == [7]


@given(busy=st.integers(0, 5), max_snoozes=st.integers(0, 4))
async def test_snoozes_spend_no_attempt_and_past_the_bound_the_job_is_dead(
    busy: int, max_snoozes: int
) -> None:
    warehouse = Warehouse(busy=busy)
    drain = JobDrain(Definitions(sync_stock(warehouse)), max_snoozes=max_snoozes)
    await drain.enqueue(sync_stock(warehouse).job(SyncStock(product_id=7)))
    runs = await drain.drain()
    while runs[-1].outcome == "snoozed":
        drain.advance(timedelta(minutes=10))
        runs += await drain.drain()
    last = "done" if busy <= max_snoozes else "dead"
    assert [r.outcome for r in runs] == ["snoozed"] * min(busy, max_snoozes) + [last]
    assert {r.attempt for r in runs} == {1}


async def test_a_definitions_timeout_bounds_its_runs() -> None:
    async def stuck(args: SyncStock) -> None:
        await anyio.sleep(10)

    slow = JobDefinition("slow", SyncStock, stuck, timeout=timedelta(seconds=0.05))
    drain = JobDrain(Definitions(slow))
    await drain.enqueue(slow.job(SyncStock(1)))
    [run] = await drain.drain()
    assert run.error == "TimeoutError: ran longer than the job timeout of 0.05 s"
