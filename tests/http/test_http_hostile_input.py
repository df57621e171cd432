"""Hostile requests get a 4xx problem, never a 500, and change nothing.

Deeply nested bodies, numbers in the wrong JSON type, and oversized headers.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.testing.shop import ManualClock
from skincare_http import sign_webhook
from tests.http.http_support import WEBHOOK_SECRET, Backend, Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
PROBLEMS = "https://skincare.example/problems"
DEPTH = 5000


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"[" * DEPTH, id="unclosed"),
        pytest.param(_nested(DEPTH), id="closed"),
        pytest.param(b'{"quantity": ' + _nested(DEPTH) + b"}", id="in-a-field"),
        pytest.param(b'{"pad": ' + _nested(DEPTH) + b', "quantity": 1}', id="in-an-unknown-field"),
    ],
)
async def test_a_deeply_nested_cart_body_is_400(client: Client, seed: Seed, body: bytes) -> None:
    alice = bearer(seed.alice.id)

    response = await client.put(f"/v1/cart/items/{seed.serum.id}", content=body, headers=alice)

    assert response.status_code == 400
    assert response.json()["type"] == f"{PROBLEMS}/invalid-request"
    assert (await client.get("/v1/cart", headers=alice)).json()["items"] == []


async def test_a_deeply_nested_webhook_is_400_and_stores_nothing(
    client: Client, clock: ManualClock, backend: Backend
) -> None:
    body = b'{"event_id": ' + _nested(DEPTH) + b"}"
    stamp = int(clock.now().timestamp())
    headers = {"X-Timestamp": str(stamp), "X-Signature": sign_webhook(WEBHOOK_SECRET, stamp, body)}

    response = await client.post("/v1/payments/webhook", content=body, headers=headers)

    assert response.status_code == 400
    assert await backend.jobs() == []


@pytest.mark.parametrize("quantity", ["1", "2", 100.0, 1.0, True, None, [1], {"n": 1}])
async def test_a_quantity_that_is_not_a_json_integer_is_400(
    client: Client, seed: Seed, quantity: Any
) -> None:
    alice = bearer(seed.alice.id)

    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", json={"quantity": quantity}, headers=alice
    )

    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["quantity"]
    assert (await client.get("/v1/cart", headers=alice)).json()["items"] == []


@pytest.mark.parametrize("body", [b"", b"null", b"1", b'"quantity"', b"[]", b"{"])
async def test_a_body_that_is_not_a_json_object_is_400(
    client: Client, seed: Seed, body: bytes
) -> None:
    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", content=body, headers=bearer(seed.alice.id)
    )

    assert response.status_code == 400
    assert response.json()["type"] == f"{PROBLEMS}/invalid-request"


async def test_a_one_mib_header_is_431(client: Client, seed: Seed) -> None:
    headers = {**bearer(seed.alice.id), "X-Padding": "x" * (1 << 20)}

    response = await client.get("/v1/cart", headers=headers)

    assert response.status_code == 431
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == f"{PROBLEMS}/headers-too-large"


async def test_headers_of_a_few_kib_are_accepted(client: Client, seed: Seed) -> None:
    headers = {**bearer(seed.alice.id), "X-Padding": "x" * 4096}

    assert (await client.get("/v1/cart", headers=headers)).status_code == 200


async def test_the_header_cap_applies_before_sign_in(client: Client) -> None:
    response = await client.get("/v1/cart", headers={"X-Padding": "x" * (1 << 20)})

    assert response.status_code == 431
