"""The API's /metrics: requests by route template and status, latency, checkouts, webhooks and
outages, counted from real requests through the app."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient
from prometheus_client import CollectorRegistry

from skincare_core.jobs.errors import Unavailable
from skincare_core.shop.unit_of_work import UnitOfWork
from skincare_core.testing.shop import ManualClock
from skincare_http import create_app
from skincare_http.metrics import ApiMetrics
from tests.http.http_support import (
    SETTINGS,
    FakeReadiness,
    MemoryBackend,
    bearer,
    seed_shop,
    services_for,
    signed,
)

pytestmark = pytest.mark.anyio


class SwitchableDatabase:
    """The in-memory database, unreachable while `down`."""

    def __init__(self, backend: MemoryBackend) -> None:
        self.backend, self.down = backend, False

    def __call__(self) -> UnitOfWork:
        if self.down:
            raise Unavailable("database unreachable")
        return self.backend.uow()


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


async def test_requests_checkouts_webhooks_and_outages_are_counted() -> None:
    backend, clock, registry = MemoryBackend(), ManualClock(), CollectorRegistry()
    seed = await seed_shop(backend)
    database = SwitchableDatabase(backend)
    services = services_for(database, clock, FakeReadiness())
    app = create_app(services=services, settings=SETTINGS, metrics=ApiMetrics(registry))
    alice = bearer(seed.alice.id)
    async with AsyncTestClient(app) as client:
        await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 1}, headers=alice)
        placed = await client.post("/v1/orders", headers={**alice, "Idempotency-Key": "k1"})
        order = placed.json()
        event = {"event_id": "evt-1", "order_id": order["order_id"], "status": "paid",
                 "amount_rupiah": order["total_rupiah"]}  # fmt: skip
        body, headers = signed(event, int(clock.now().timestamp()))
        paid = await client.post("/v1/payments/webhook", content=body, headers=headers)
        await client.get("/v1/orders/999999", headers=alice)
        await client.get("/no/such/path")
        database.down = True
        outage = await client.get("/v1/products", headers=alice)
        scraped = await client.get("/metrics")
    assert (placed.status_code, paid.status_code, outage.status_code) == (201, 200, 503)
    assert _value(registry, "skincare_checkouts_placed_total") == 1
    assert _value(registry, "skincare_webhooks_received_total") == 1
    assert _value(registry, "skincare_http_unavailable_total") == 1
    missing = {"method": "GET", "route": "/v1/orders/{order_id}", "status": "404"}
    assert _value(registry, "skincare_http_requests_total", **missing) == 1
    unmatched = {"method": "GET", "route": "unmatched", "status": "404"}
    assert _value(registry, "skincare_http_requests_total", **unmatched) == 1
    latency = {"method": "POST", "route": "/v1/orders"}
    assert _value(registry, "skincare_http_request_duration_seconds_count", **latency) == 1
    assert scraped.headers["content-type"].startswith("text/plain")
    assert "skincare_checkouts_placed_total 1.0" in scraped.text
