"""A validly signed token whose user does not exist signs nobody in and stores nothing."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from tests.http.http_support import Backend, Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
UNAUTHORIZED = "https://skincare.example/problems/unauthorized"


@pytest.fixture
def backend(any_backend: Backend) -> Backend:
    """The rule holds on the in-memory kit and on the Postgres adapters (a foreign key) alike."""
    return any_backend


async def test_a_cart_change_for_a_user_that_does_not_exist_is_401_and_stores_nothing(
    client: Client, seed: Seed, uow_factory: UnitOfWorkFactory
) -> None:
    ghost = seed.bob.id + 1000

    response = await client.put(
        f"/v1/cart/items/{seed.serum.id}", json={"quantity": 1}, headers=bearer(ghost)
    )

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == UNAUTHORIZED
    assert response.headers["www-authenticate"].startswith("Bearer")
    async with uow_factory() as uow:
        assert await uow.carts.lines(ghost) == []
