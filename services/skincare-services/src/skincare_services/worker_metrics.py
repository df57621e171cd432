"""The worker process's metrics: the engine's counters, queue depth, and /metrics + /healthz.

Only built when SKINCARE_METRICS_PORT is set, and imported only then: a worker without metrics
loads nothing of prometheus-client.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import QueueCounts, QueueStats
from skincare_postgres import PostgresQueueStats
from skincare_prometheus import PrometheusJobMetrics, QueueDepthCollector, WorkerEndpoint
from skincare_services.settings import Settings


@frozen
class OneQueueStats:
    """The QueueStats of one named queue out of a backend's stats of every queue."""

    every: QueueStats
    queue: str

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """The named queue's counts (`queue` is ignored: this source is one queue)."""
        return await self.every.stats(queue=self.queue)


@frozen
class WorkerMetrics:
    """What the worker wires in: the port's adapter for its workers, the endpoint to serve."""

    jobs: PrometheusJobMetrics
    endpoint: WorkerEndpoint


def worker_metrics(
    *, settings: Settings, engine: AsyncEngine, backend: Backend, queues: Sequence[str]
) -> WorkerMetrics:
    """Counters of the served `queues`, depth per queue from the backend's stats, what is
    paused, and the outbox's backlog where a relay runs."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    jobs = PrometheusJobMetrics(registry, queues=queues)
    depth_sources = {name: OneQueueStats(backend.stats, name) for name in queues}
    # The units of work write their outbox rows to the jobs table of the process's database:
    # where a relay forwards them, its ready rows are what the relay has yet to send.
    outbox = None if backend.outbox is None else PostgresQueueStats(engine)
    depth = QueueDepthCollector(depth_sources, outbox=outbox, pauses=backend.pauses)
    registry.register(depth)
    endpoint = WorkerEndpoint(
        registry=registry, jobs=jobs, depth=depth, stale_after=settings.worker_stale_seconds
    )
    return WorkerMetrics(jobs, endpoint)
