"""Products and the signed-in user's cart."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.http.http_support import Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
PROBLEMS = "https://skincare.example/problems"


async def test_products_list_price_and_stock(client: Client, seed: Seed) -> None:
    response = await client.get("/v1/products", headers=bearer(seed.alice.id))

    assert response.status_code == 200
    assert response.json() == {
        "products": [
            {"id": seed.serum.id, "sku": "SRM-01", "name": "Niacinamide serum",
             "price_rupiah": 150_000, "stock": 5},
            {"id": seed.toner.id, "sku": "TNR-01", "name": "Hydrating toner",
             "price_rupiah": 90_000, "stock": 1},
        ]
    }  # fmt: skip


async def test_a_new_cart_is_empty(client: Client, seed: Seed) -> None:
    response = await client.get("/v1/cart", headers=bearer(seed.alice.id))

    assert response.json() == {"items": [], "total_rupiah": 0}


async def test_setting_quantities_builds_the_users_cart(client: Client, seed: Seed) -> None:
    alice = bearer(seed.alice.id)
    await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 2}, headers=alice)
    response = await client.put(
        f"/v1/cart/items/{seed.toner.id}", json={"quantity": 1}, headers=alice
    )

    assert response.status_code == 200
    assert response.json()["total_rupiah"] == 2 * 150_000 + 90_000
    assert (await client.get("/v1/cart", headers=alice)).json() == response.json()
    bobs = await client.get("/v1/cart", headers=bearer(seed.bob.id))
    assert bobs.json()["items"] == []


async def test_quantity_zero_removes_the_line(client: Client, seed: Seed) -> None:
    alice = bearer(seed.alice.id)
    await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 2}, headers=alice)

    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", json={"quantity": 0}, headers=alice
    )

    assert response.json() == {"items": [], "total_rupiah": 0}


async def test_unknown_product_is_404(client: Client, seed: Seed) -> None:
    response = await client.put(
        "/v1/cart/items/9999", json={"quantity": 1}, headers=bearer(seed.alice.id)
    )

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == f"{PROBLEMS}/product-not-found"


@pytest.mark.parametrize(
    "body",
    [{"quantity": -1}, {"quantity": "two"}, {}, {"quantity": 10_001}, {"quantity": 1.5}],
)
async def test_invalid_quantities_are_400_naming_the_field(
    client: Client, seed: Seed, body: dict[str, object]
) -> None:
    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", json=body, headers=bearer(seed.alice.id)
    )

    assert response.status_code == 400
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/invalid-request"
    assert "quantity" in problem["detail"]
    assert problem["errors"][0]["field"] == "quantity"


async def test_malformed_json_is_400(client: Client, seed: Seed) -> None:
    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", content=b"{not json", headers=bearer(seed.alice.id)
    )

    assert response.status_code == 400
    assert response.json()["type"] == f"{PROBLEMS}/invalid-request"


async def test_a_body_over_64_kib_is_413(client: Client, seed: Seed) -> None:
    padding = "x" * (64 * 1024)
    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}",
        content=f'{{"quantity": 1, "pad": "{padding}"}}'.encode(),
        headers=bearer(seed.alice.id),
    )

    assert response.status_code == 413
    assert response.json()["type"] == f"{PROBLEMS}/payload-too-large"


async def test_a_body_just_under_the_limit_is_accepted(client: Client, seed: Seed) -> None:
    body = b'{"quantity": 1}'
    body = body[:-1] + b" " * (64 * 1024 - len(body)) + b"}"

    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", content=body, headers=bearer(seed.alice.id)
    )

    assert response.status_code == 200
