"""QueueDepthCollector's cache and WorkerEndpoint's /metrics and /healthz over real TCP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry

from skincare_core.jobs.ports import QueueCounts
from skincare_core.testing.jobs.memory_steering import InMemoryPauses
from skincare_prometheus import PrometheusJobMetrics, QueueDepthCollector, WorkerEndpoint

pytestmark = pytest.mark.anyio


class CountingStats:
    """Fixed counts, and how many times they were asked for; fails when told to."""

    def __init__(self, counts: QueueCounts) -> None:
        self.counts, self.asked, self.failing = counts, 0, False

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        self.asked += 1
        if self.failing:
            raise ConnectionError("database down")
        return self.counts


@asynccontextmanager
async def serving(endpoint: WorkerEndpoint) -> AsyncIterator[httpx.AsyncClient]:
    async with anyio.create_task_group() as tg:
        port = await tg.start(partial(endpoint.serve, host="127.0.0.1", port=0))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            yield client
        tg.cancel_scope.cancel()


def _endpoint(
    stats: CountingStats, outbox: CountingStats | None = None, stale_after: float = 60
) -> tuple[WorkerEndpoint, PrometheusJobMetrics]:
    registry = CollectorRegistry()
    jobs = PrometheusJobMetrics(registry, queues=["default"])
    depth = QueueDepthCollector({"default": stats}, outbox=outbox)
    registry.register(depth)
    endpoint = WorkerEndpoint(registry=registry, jobs=jobs, depth=depth, stale_after=stale_after)
    return endpoint, jobs


async def test_ten_scrapes_cost_one_query_and_show_every_state() -> None:
    stats = CountingStats(QueueCounts(3, 2, 1, 4, timedelta(seconds=7)))
    outbox = CountingStats(QueueCounts(5, 1, 2, 0, timedelta(seconds=2)))
    endpoint, _ = _endpoint(stats, outbox)
    async with serving(endpoint) as client:
        bodies = [(await client.get("/metrics")).text for _ in range(10)]
    assert stats.asked == outbox.asked == 1
    text = bodies[-1]
    for state, value in (("ready", 3), ("scheduled", 2), ("leased", 1), ("dead", 4)):
        assert f'skincare_queue_jobs{{queue="default",state="{state}"}} {value}.0' in text
    assert 'skincare_queue_oldest_ready_seconds{queue="default"} 7.0' in text
    assert "skincare_outbox_backlog 7.0" in text
    assert "skincare_outbox_scheduled 1.0" in text
    assert "skincare_outbox_oldest_seconds 2.0" in text


async def test_a_failed_depth_query_leaves_the_queue_out_and_the_scrape_answers() -> None:
    stats = CountingStats(QueueCounts(0, 0, 0, 0, None))
    stats.failing = True
    endpoint, _ = _endpoint(stats)
    async with serving(endpoint) as client:
        response = await client.get("/metrics")
    assert response.status_code == 200
    assert 'queue="default"' not in response.text


async def test_healthz_is_503_once_a_loop_is_stale_and_unknown_paths_are_404() -> None:
    stats = CountingStats(QueueCounts(0, 0, 0, 0, None))
    fresh, jobs = _endpoint(stats)
    stale, _ = _endpoint(stats, stale_after=-1)
    async with serving(fresh) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/nope")).status_code == 404
        assert (await client.post("/metrics")).status_code == 405
    async with serving(stale) as client:
        response = await client.get("/healthz")
    assert (response.status_code, response.text) == (503, "stale: default\n")
    assert jobs.stale_queues(60) == []


async def test_the_paused_queues_and_types_are_gauges() -> None:
    pauses = InMemoryPauses()
    await pauses.pause(queue="default")
    await pauses.pause(job_type="send_confirmation_email")
    registry = CollectorRegistry()
    jobs = PrometheusJobMetrics(registry, queues=["default", "bulk"])
    stats = CountingStats(QueueCounts(0, 0, 0, 0, None))
    depth = QueueDepthCollector({"default": stats, "bulk": stats}, pauses=pauses)
    registry.register(depth)
    endpoint = WorkerEndpoint(registry=registry, jobs=jobs, depth=depth, stale_after=60)
    async with serving(endpoint) as client:
        text = (await client.get("/metrics")).text
    assert 'skincare_queue_paused{queue="default"} 1.0' in text
    assert 'skincare_queue_paused{queue="bulk"} 0.0' in text
    assert 'skincare_job_type_paused{type="send_confirmation_email"} 1.0' in text
