"""The job engine's `JobMetrics` port for Prometheus: jobs by outcome, durations, pickup
latency, in flight, receive and settle errors, and when each worker loop last went round.

The worker calls this on every job, so the calls only add to plain ints and lists; a collector
turns them into prometheus-client's metric families at scrape time. prometheus-client's own
Counter and Histogram take a lock and walk the buckets in Python on every update, a cost the
hot path does not pay (docs/performance.md has the figures).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from skincare_core.jobs.metrics import Outcome

# Jobs run from milliseconds (a no-op) to minutes (the job timeout); pickups wait as long.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class _Histogram:
    """Counts per bucket (the last one past every bound) and the sum of what was observed."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(BUCKETS, value)] += 1
        self.total += value

    def cumulative(self) -> list[tuple[str, float]]:
        running, buckets = 0, []
        for bound, count in zip((*map(str, BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            buckets.append((bound, float(running)))
        return buckets


class PrometheusJobMetrics(Collector):
    """The counts of every worker in the process, registered in `registry` as one collector."""

    def __init__(self, registry: CollectorRegistry, *, queues: Iterable[str]) -> None:
        self._jobs: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self._durations: defaultdict[str, _Histogram] = defaultdict(_Histogram)
        self._pickups: defaultdict[str, _Histogram] = defaultdict(_Histogram)
        self._receive_errors: defaultdict[str, int] = defaultdict(int)
        self._settle_errors: defaultdict[str, int] = defaultdict(int)
        self._running = 0
        self._beats = dict.fromkeys(queues, time.monotonic())
        registry.register(self)

    def received(self, queue: str, count: int) -> None:
        """The queue's worker loop went round."""
        self._beats[queue] = time.monotonic()

    def receive_failed(self, queue: str) -> None:
        """Count a failed receive."""
        self._receive_errors[queue] += 1

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        """A handler starts: one more in flight, and how long the job waited."""
        self._running += 1
        if pickup_latency is not None:
            self._pickups[job_type].observe(pickup_latency)

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        """Count the outcome and the duration; one fewer in flight."""
        self._running -= 1
        self._jobs[queue, job_type, outcome] += 1
        self._durations[job_type].observe(duration)

    def settle_failed(self, queue: str) -> None:
        """Count a failed settle."""
        self._settle_errors[queue] += 1

    def stale_queues(self, stale_after: float) -> list[str]:
        """The queues whose worker loop has not gone round for `stale_after` seconds."""
        now = time.monotonic()
        return [queue for queue, beat in self._beats.items() if now - beat > stale_after]

    def collect(self) -> Iterator[Metric]:
        """The counts as prometheus-client metric families."""
        jobs = CounterMetricFamily(
            "skincare_jobs", "Jobs settled, by queue, type and outcome.",
            labels=["queue", "type", "outcome"],
        )  # fmt: skip
        for labels, count in list(self._jobs.items()):
            jobs.add_metric(labels, count)
        yield jobs
        yield _histogram("skincare_job_duration_seconds", "How long handlers ran.", self._durations)
        yield _histogram(
            "skincare_job_pickup_latency_seconds",
            "From the job's enqueue to its handler's start.",
            self._pickups,
        )
        yield _by_queue("skincare_receive_errors", "Receives that raised.", self._receive_errors)
        yield _by_queue(
            "skincare_settle_errors",
            "Acks, nacks, dead-letters or lease extensions that raised.",
            self._settle_errors,
        )
        yield GaugeMetricFamily(
            "skincare_jobs_in_flight", "Jobs whose handler is running.", value=self._running
        )


def _histogram(name: str, doc: str, by_type: dict[str, _Histogram]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc + " By job type.", labels=["type"])
    for job_type, histogram in list(by_type.items()):
        family.add_metric([job_type], histogram.cumulative(), sum_value=histogram.total)
    return family


def _by_queue(name: str, doc: str, counts: dict[str, int]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=["queue"])
    for queue, count in list(counts.items()):
        family.add_metric([queue], count)
    return family
