"""The API's Prometheus metrics: requests by route and status, latency, checkouts placed,
webhooks received and backing-service outages, in the app's own registry, served on /metrics."""

from __future__ import annotations

from litestar import Response, get
from litestar.handlers import HTTPRouteHandler
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

# Buckets from milliseconds (a checkout) to seconds (the tail under load).
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_CHECKOUT = ("POST", "/v1/orders", 201)
_WEBHOOK = ("POST", "/v1/payments/webhook", 200)


class ApiMetrics:
    """Counters and a histogram in one registry; `observe` is called once per request."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self._requests = Counter(
            "skincare_http_requests", "Requests by method, route template and status.",
            ["method", "route", "status"], registry=self.registry,
        )  # fmt: skip
        self._latency = Histogram(
            "skincare_http_request_duration_seconds", "Request latency by method and route.",
            ["method", "route"], buckets=_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self._checkouts = Counter(
            "skincare_checkouts_placed", "Checkouts answered 201 (a replayed key too).",
            registry=self.registry,
        )  # fmt: skip
        self._webhooks = Counter(
            "skincare_webhooks_received", "Payment webhooks accepted (signature valid, stored).",
            registry=self.registry,
        )  # fmt: skip
        self._unavailable = Counter(
            "skincare_http_unavailable", "Requests answered 503 because the database was down.",
            registry=self.registry,
        )  # fmt: skip

    def observe(self, method: str, route: str | None, status: int, seconds: float) -> None:
        """Count one request; an unmatched path is the route `unmatched` (one series, not one
        per path a scanner tries)."""
        template = route or "unmatched"
        self._requests.labels(method, template, str(status)).inc()
        self._latency.labels(method, template).observe(seconds)
        if (method, template, status) == _CHECKOUT:
            self._checkouts.inc()
        elif (method, template, status) == _WEBHOOK:
            self._webhooks.inc()

    def unavailable(self) -> None:
        """A backing service was unreachable for one request."""
        self._unavailable.inc()


def metrics_route(metrics: ApiMetrics) -> HTTPRouteHandler:
    """GET /metrics: the registry in Prometheus' text format, by prometheus-client."""

    @get("/metrics", include_in_schema=False, sync_to_thread=False)
    def scrape() -> Response[bytes]:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return scrape
