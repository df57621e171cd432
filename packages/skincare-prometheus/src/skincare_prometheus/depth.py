"""Queue depth as gauges, from one collector that queries at scrape time, cached a few seconds."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping

import anyio
from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.registry import Collector

from skincare_core.jobs.ports import QueueCounts, QueueStats
from skincare_core.jobs.steering import Paused, Pauses

logger = logging.getLogger(__name__)
_STATES = ("ready", "scheduled", "leased", "dead")


class QueueDepthCollector(Collector):
    """Per queue: ready, scheduled, leased and dead jobs and the oldest ready job's age, and
    with `pauses` whether it is paused (and each paused job type); with an outbox (SQS), its
    backlog and oldest row's age.

    prometheus-client calls `collect` synchronously; the server awaits `refresh` first, which
    queries only when the cached counts are older than `max_age`, so ten scrapes in a row cost
    one query per queue. A failed query leaves the queue out of that scrape (and is logged).
    """

    def __init__(
        self,
        queues: Mapping[str, QueueStats],
        *,
        outbox: QueueStats | None = None,
        pauses: Pauses | None = None,
        max_age: float = 5.0,
    ) -> None:
        self._queues = dict(queues)
        self._outbox = outbox
        self._pauses = pauses
        self._paused: Paused | None = None
        self._max_age = max_age
        self._counts: dict[str, QueueCounts] = {}
        self._outbox_counts: QueueCounts | None = None
        self._at = -max_age
        self._lock = anyio.Lock()

    async def refresh(self) -> None:
        """Query every queue (and the outbox) unless the cached counts are fresh."""
        async with self._lock:
            if time.monotonic() - self._at < self._max_age:
                return
            self._counts = {name: c for name, s in self._queues.items() if (c := await _read(s))}
            self._outbox_counts = None if self._outbox is None else await _read(self._outbox)
            self._paused = None if self._pauses is None else await _read_pauses(self._pauses)
            self._at = time.monotonic()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The cached counts as gauges."""
        depth = GaugeMetricFamily(
            "skincare_queue_jobs", "Jobs in a named queue by state.", labels=["queue", "state"]
        )
        oldest = GaugeMetricFamily(
            "skincare_queue_oldest_ready_seconds",
            "How long the oldest ready job has waited (absent where the backend cannot tell).",
            labels=["queue"],
        )
        for name, counts in self._counts.items():
            for state in _STATES:
                depth.add_metric([name, state], getattr(counts, state))
            if counts.oldest_ready_age is not None:
                oldest.add_metric([name], counts.oldest_ready_age.total_seconds())
        yield depth
        yield oldest
        yield from self._paused_families()
        yield from self._outbox_families()

    def _paused_families(self) -> Iterator[GaugeMetricFamily]:
        paused = self._paused
        if paused is None:
            return
        queues = GaugeMetricFamily(
            "skincare_queue_paused",
            "1 while a named queue is paused (its jobs wait), else 0.",
            labels=["queue"],
        )
        for name in sorted({*self._queues, *paused.queues}):
            queues.add_metric([name], 1.0 if name in paused.queues else 0.0)
        types = GaugeMetricFamily(
            "skincare_job_type_paused", "1 for each paused job type.", labels=["type"]
        )
        for name in sorted(paused.types):
            types.add_metric([name], 1.0)
        yield queues
        yield types

    def _outbox_families(self) -> Iterator[GaugeMetricFamily]:
        counts = self._outbox_counts
        if counts is None:
            return
        # A scheduled row (a delayed job) waits for its time, not for the relay: not backlog.
        backlog = counts.ready + counts.leased
        yield GaugeMetricFamily(
            "skincare_outbox_backlog", "Due outbox rows the relay has not sent yet.", value=backlog
        )
        yield GaugeMetricFamily(
            "skincare_outbox_scheduled",
            "Outbox rows of delayed jobs, sent when they are due.",
            value=counts.scheduled,
        )
        age = counts.oldest_ready_age
        yield GaugeMetricFamily(
            "skincare_outbox_oldest_seconds",
            "How long the oldest due outbox row has waited for the relay.",
            value=0.0 if age is None else age.total_seconds(),
        )


async def _read_pauses(pauses: Pauses) -> Paused | None:
    try:
        return await pauses.paused()
    except Exception as exc:
        logger.error("metrics.pauses_failed", extra={"error": repr(exc)})
        return None


async def _read(stats: QueueStats) -> QueueCounts | None:
    try:
        return await stats.stats()
    except Exception as exc:
        logger.error("metrics.depth_failed", extra={"error": repr(exc)})
        return None
