"""Prometheus adapter of the job engine: `PrometheusJobMetrics` (the `JobMetrics` port),
`QueueDepthCollector` (queue depth at scrape time) and `WorkerEndpoint` (/metrics, /healthz)."""

from skincare_prometheus.depth import QueueDepthCollector
from skincare_prometheus.job_metrics import PrometheusJobMetrics
from skincare_prometheus.server import WorkerEndpoint

__all__ = ["PrometheusJobMetrics", "QueueDepthCollector", "WorkerEndpoint"]
