"""The published schema's integer bounds are exactly the bounds the API enforces.

For each integer body field, the values at and around each documented bound (and around zero,
where a dropped `exclusiveMinimum: 0` would hide) are sent: the API refuses (400) exactly those
the document says are invalid.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.testing.shop import ManualClock
from tests.http.http_support import Seed, bearer, signed

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]


def _documented(field: dict[str, Any], value: int) -> bool:
    return bool(
        value >= field.get("minimum", value)
        and value > field.get("exclusiveMinimum", value - 1)
        and value <= field.get("maximum", value)
        and value < field.get("exclusiveMaximum", value + 1)
    )


def _around_bounds(field: dict[str, Any]) -> list[int]:
    bounds = [int(field[k]) for k in ("minimum", "exclusiveMinimum", "maximum") if k in field]
    assert bounds, f"no documented bound: {field}"
    return sorted({bound + step for bound in (0, *bounds) for step in (-1, 0, 1)})


async def _schema(client: Client, name: str, field: str) -> dict[str, Any]:
    document = (await client.get("/schema/openapi.json")).json()
    schema: dict[str, Any] = document["components"]["schemas"][name]["properties"][field]
    return schema


async def test_cart_quantity_bounds_are_the_documented_ones(client: Client, seed: Seed) -> None:
    field = await _schema(client, "CartQuantity", "quantity")
    for quantity in _around_bounds(field):
        response = await client.put(
            f"/v1/cart/items/{seed.serum.id}",
            json={"quantity": quantity},
            headers=bearer(seed.alice.id),
        )
        assert (response.status_code != 400) == _documented(field, quantity), quantity


async def test_payment_amount_bounds_are_the_documented_ones(
    client: Client, clock: ManualClock
) -> None:
    field = await _schema(client, "PaymentEventBody", "amount_rupiah")
    for amount in _around_bounds(field):
        event = {"event_id": f"evt-{amount}", "order_id": 1, "status": "paid"}
        body, headers = signed({**event, "amount_rupiah": amount}, int(clock.now().timestamp()))
        response = await client.post("/v1/payments/webhook", content=body, headers=headers)
        # Within bounds the event reaches the service: 404, as order 1 does not exist.
        assert (response.status_code != 400) == _documented(field, amount), amount
