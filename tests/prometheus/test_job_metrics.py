"""PrometheusJobMetrics under the real Worker on the in-memory queue: every outcome counted."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from attrs import evolve
from prometheus_client import CollectorRegistry

from skincare_core.jobs import enqueue
from skincare_core.jobs import worker as worker_module
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.router import Router
from skincare_core.testing.jobs import InMemoryQueue
from skincare_prometheus import PrometheusJobMetrics
from tests.core.worker_kit import eventually, fast_queue, running, worker_on

pytestmark = pytest.mark.anyio


def _count(registry: CollectorRegistry, job_type: str, outcome: str) -> float:
    labels = {"queue": "default", "type": job_type, "outcome": outcome}
    return registry.get_sample_value("skincare_jobs_total", labels) or 0.0


async def _ok(job: Job) -> None:
    return None


async def _flaky(job: Job) -> None:
    raise RuntimeError("try again")


async def _poison(job: Job) -> None:
    raise PermanentJobError("never")


async def test_outcomes_durations_and_in_flight_are_counted() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusJobMetrics(registry, queues=["default"])
    router = Router()
    for job_type, handler in (("ok", _ok), ("flaky", _flaky), ("poison", _poison)):
        router.register(job_type, handler)
    queue = fast_queue()
    for job_type in ("ok", "ok", "flaky", "poison"):
        await enqueue(queue, new_job(job_type))
    worker = worker_on(queue, router, metrics=metrics, max_attempts=2)
    async with running(worker):
        await eventually(lambda: _count(registry, "flaky", "dead_lettered") == 1)
    assert _count(registry, "ok", "done") == 2
    assert _count(registry, "flaky", "retried") == 1
    assert _count(registry, "poison", "dead_lettered") == 1
    durations = registry.get_sample_value("skincare_job_duration_seconds_count", {"type": "ok"})
    assert durations == 2
    assert registry.get_sample_value("skincare_jobs_in_flight") == 0
    assert metrics.stale_queues(60) == []


async def test_a_job_cut_off_by_shutdown_is_counted_cancelled() -> None:
    registry = CollectorRegistry()
    router = Router()
    started = anyio.Event()

    async def slow(job: Job) -> None:
        started.set()
        await anyio.sleep(10)

    router.register("slow", slow)
    queue = fast_queue()
    await enqueue(queue, new_job("slow"))
    metrics = PrometheusJobMetrics(registry, queues=["default"])
    worker = worker_on(queue, router, metrics=metrics, shutdown_grace=timedelta(seconds=0.05))
    async with running(worker):
        await started.wait()
    assert _count(registry, "slow", "cancelled") == 1


class StampingQueue(InMemoryQueue):
    """An in-memory queue whose messages say they were enqueued three seconds ago."""

    async def receive(self, max_messages: int = 1) -> list[Message]:
        sent = datetime.now(UTC) - timedelta(seconds=3)
        return [evolve(m, enqueued_at=sent) for m in await super().receive(max_messages)]


async def test_pickup_latency_is_measured_from_the_enqueue_time() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusJobMetrics(registry, queues=["default"])
    router = Router()
    router.register("ok", _ok)
    queue = StampingQueue(wait=timedelta(seconds=0.02))
    await enqueue(queue, new_job("ok"))
    async with running(worker_on(queue, router, metrics=metrics)):
        await eventually(lambda: _count(registry, "ok", "done") == 1)
    bucket = "skincare_job_pickup_latency_seconds_bucket"
    assert registry.get_sample_value(bucket, {"type": "ok", "le": "2.5"}) == 0
    assert registry.get_sample_value(bucket, {"type": "ok", "le": "5.0"}) == 1


def test_a_queue_whose_loop_stopped_going_round_is_stale() -> None:
    metrics = PrometheusJobMetrics(CollectorRegistry(), queues=["default", "bulk"])
    metrics.received("default", 0)
    assert metrics.stale_queues(60) == []
    assert metrics.stale_queues(-1) == ["default", "bulk"]


async def test_receive_and_settle_errors_are_counted() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusJobMetrics(registry, queues=["default"])
    metrics.receive_failed("default")
    metrics.settle_failed("default")
    metrics.settle_failed("default")
    labels = {"queue": "default"}
    assert registry.get_sample_value("skincare_receive_errors_total", labels) == 1
    assert registry.get_sample_value("skincare_settle_errors_total", labels) == 2


class FailingBatchAcks(InMemoryQueue):
    """A queue whose batched acks fail: every job in the batch stays leased."""

    async def ack_many(self, messages: Sequence[Message]) -> None:
        raise ConnectionError("ack lost")


async def test_a_failed_batch_ack_counts_a_settle_error_per_job() -> None:
    registry = CollectorRegistry()
    metrics = PrometheusJobMetrics(registry, queues=["default"])
    router = Router()
    router.register("ok", _ok)
    queue = FailingBatchAcks(visibility_timeout=timedelta(seconds=5), wait=timedelta(seconds=0.02))
    for _ in range(3):
        await enqueue(queue, new_job("ok"))
    labels = {"queue": "default"}
    async with running(worker_on(queue, router, metrics=metrics)):
        await eventually(
            lambda: registry.get_sample_value("skincare_settle_errors_total", labels) == 3
        )
    assert _count(registry, "ok", "done") == 3


async def test_a_worker_with_every_slot_busy_is_not_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    # No claim runs while every slot is taken: the worker's own tick keeps the queue fresh.
    monkeypatch.setattr(worker_module, "_FULL_TICK", 0.05)
    metrics = PrometheusJobMetrics(CollectorRegistry(), queues=["default"])
    router, started = Router(), anyio.Event()

    async def busy(job: Job) -> None:
        started.set()
        await anyio.sleep(10)

    router.register("busy", busy)
    queue = fast_queue()
    await enqueue(queue, new_job("busy"))
    grace = timedelta(seconds=0.05)
    worker = worker_on(queue, router, metrics=metrics, concurrency=1, shutdown_grace=grace)
    async with running(worker):
        await started.wait()
        await anyio.sleep(1.5)
        assert metrics.stale_queues(1.0) == []
