"""POST /v1/orders (idempotent checkout) and GET /v1/orders/{id} (owner only)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.shop.job_types import EXPIRE_UNPAID_ORDER, SEND_CONFIRMATION_EMAIL
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_core.testing.shop import ManualClock
from tests.http.http_support import Backend, Seed, bearer

pytestmark = pytest.mark.anyio
JOBS_PER_ORDER = 2
"""The confirmation e-mail and the order's expiry."""
Client = AsyncTestClient[Litestar]
PROBLEMS = "https://skincare.example/problems"


@pytest.fixture
def backend(any_backend: Backend) -> Backend:
    """These tests hold on the in-memory kit and on the Postgres adapters alike."""
    return any_backend


Fill = Callable[[int, int, int], Awaitable[None]]


@pytest.fixture
def fill(client: Client) -> Fill:
    async def put(user_id: int, product_id: int, quantity: int) -> None:
        response = await client.put(
            f"/v1/cart/items/{product_id}", json={"quantity": quantity}, headers=bearer(user_id)
        )
        assert response.status_code == 200

    return put


def _checkout(user_id: int, key: str) -> dict[str, str]:
    return {**bearer(user_id), "Idempotency-Key": key}


async def test_checkout_answers_201_with_the_order_and_queues_its_email(
    client: Client, seed: Seed, fill: Fill, backend: Backend, uow_factory: UnitOfWorkFactory
) -> None:
    await fill(seed.alice.id, seed.serum.id, 2)

    response = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"order_id", "order_number", "status", "payment_status", "total_rupiah"}
    assert body["status"] == "pending"
    assert body["payment_status"] == "unpaid"
    assert body["total_rupiah"] == 300_000
    assert response.headers["location"] == f"/v1/orders/{body['order_id']}"
    jobs = await backend.jobs()
    payload = {"order_id": body["order_id"]}
    assert sorted((j.type, j.payload) for j in jobs) == [
        (EXPIRE_UNPAID_ORDER, payload),
        (SEND_CONFIRMATION_EMAIL, payload),
    ]
    async with uow_factory() as uow:
        serum = await uow.products.get(seed.serum.id)
        cart = await uow.carts.lines(seed.alice.id)
    assert serum is not None
    assert serum.stock == 3
    assert cart == []


async def test_the_same_key_again_answers_the_same_order(
    client: Client, seed: Seed, fill: Fill, backend: Backend
) -> None:
    await fill(seed.alice.id, seed.serum.id, 1)
    first = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    again = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    assert again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["location"] == first.headers["location"]
    assert len(await backend.jobs()) == JOBS_PER_ORDER


async def test_the_same_key_with_a_different_cart_answers_the_first_order_unchanged(
    client: Client, seed: Seed, fill: Fill, backend: Backend, uow_factory: UnitOfWorkFactory
) -> None:
    await fill(seed.alice.id, seed.serum.id, 1)
    first = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))
    await fill(seed.alice.id, seed.toner.id, 1)

    again = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    assert again.status_code == 201
    assert again.json() == first.json()
    assert len(await backend.jobs()) == JOBS_PER_ORDER
    async with uow_factory() as uow:
        cart = await uow.carts.lines(seed.alice.id)
        toner = await uow.products.get(seed.toner.id)
    assert [(line.product.id, line.quantity) for line in cart] == [(seed.toner.id, 1)]
    assert toner is not None
    assert toner.stock == 1


async def test_keys_are_per_user(client: Client, seed: Seed, fill: Fill) -> None:
    await fill(seed.alice.id, seed.serum.id, 1)
    await fill(seed.bob.id, seed.serum.id, 1)

    alices = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "same"))
    bobs = await client.post("/v1/orders", headers=_checkout(seed.bob.id, "same"))

    assert alices.json()["order_id"] != bobs.json()["order_id"]


@pytest.mark.parametrize("key", [None, "", "k\x00-1", "k\x1f-1"])
async def test_checkout_without_a_valid_idempotency_key_is_400(
    client: Client, seed: Seed, fill: Fill, backend: Backend, key: str | None
) -> None:
    await fill(seed.alice.id, seed.serum.id, 1)
    headers = bearer(seed.alice.id) if key is None else _checkout(seed.alice.id, key)

    response = await client.post("/v1/orders", headers=headers)

    assert response.status_code == 400
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/invalid-request"
    assert problem["errors"][0]["field"] == "Idempotency-Key"
    assert await backend.jobs() == []


async def test_empty_cart_is_409_cart_empty(client: Client, seed: Seed, backend: Backend) -> None:
    response = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == f"{PROBLEMS}/cart-empty"
    assert await backend.jobs() == []


async def test_out_of_stock_is_409_out_of_stock_and_changes_nothing(
    client: Client, seed: Seed, fill: Fill, backend: Backend, uow_factory: UnitOfWorkFactory
) -> None:
    await fill(seed.alice.id, seed.toner.id, 2)

    response = await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))

    assert response.status_code == 409
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/out-of-stock"
    assert f"product {seed.toner.id}" in problem["detail"]
    assert await backend.jobs() == []
    async with uow_factory() as uow:
        toner = await uow.products.get(seed.toner.id)
    assert toner is not None
    assert toner.stock == 1


async def test_the_owner_reads_the_order_with_items(
    client: Client, seed: Seed, fill: Fill, clock: ManualClock
) -> None:
    await fill(seed.alice.id, seed.serum.id, 2)
    placed = (await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))).json()

    response = await client.get(f"/v1/orders/{placed['order_id']}", headers=bearer(seed.alice.id))

    assert response.status_code == 200
    order = response.json()
    assert {k: order[k] for k in placed} == placed
    assert datetime.fromisoformat(order["created_at"]) == clock.now()
    assert order["items"] == [
        {"product_id": seed.serum.id, "name": "Niacinamide serum", "quantity": 2,
         "unit_price_rupiah": 150_000, "line_total_rupiah": 300_000},
    ]  # fmt: skip


async def test_another_users_order_is_404_not_403(client: Client, seed: Seed, fill: Fill) -> None:
    await fill(seed.alice.id, seed.serum.id, 1)
    placed = (await client.post("/v1/orders", headers=_checkout(seed.alice.id, "k-1"))).json()

    response = await client.get(f"/v1/orders/{placed['order_id']}", headers=bearer(seed.bob.id))

    assert response.status_code == 404
    assert response.json()["type"] == f"{PROBLEMS}/order-not-found"


async def test_a_missing_order_is_404(client: Client, seed: Seed) -> None:
    response = await client.get("/v1/orders/424242", headers=bearer(seed.alice.id))

    assert response.status_code == 404
    assert response.json()["type"] == f"{PROBLEMS}/order-not-found"


async def test_an_order_id_out_of_range_is_400(client: Client, seed: Seed) -> None:
    response = await client.get(f"/v1/orders/{2**31}", headers=bearer(seed.alice.id))

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "order_id"
