"""Probes, and the error edge: unknown paths, wrong methods, unexpected exceptions."""

from __future__ import annotations

import logging

import attrs
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.models import Product
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_http import ApiServices, ApiSettings, create_app
from tests.http.http_support import FakeReadiness, Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
PROBLEMS = "https://skincare.example/problems"


class BrokenShop(ShopService):
    """A shop whose catalogue read fails the way a driver would."""

    async def products(self) -> list[Product]:
        raise RuntimeError('relation "products" does not exist: SELECT id, sku FROM products')


async def test_healthz_answers_ok(client: Client) -> None:
    response = await client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_answers_ready_while_the_database_answers(client: Client) -> None:
    response = await client.get("/readyz")

    assert response.status_code == 200
    assert response.json() == {"status": "ready"}


async def test_readyz_is_a_503_problem_when_the_database_is_down(
    client: Client, readiness: FakeReadiness
) -> None:
    readiness.up = False

    response = await client.get("/readyz")

    assert response.status_code == 503
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/not-ready"
    assert "10.0.0.5" not in response.text


async def test_every_response_carries_a_request_id(client: Client) -> None:
    first = await client.get("/healthz")
    second = await client.get("/nowhere")

    assert len(first.headers["x-request-id"]) == 32
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert second.json()["request_id"] == second.headers["x-request-id"]


async def test_an_unknown_path_is_a_404_problem(client: Client) -> None:
    response = await client.get("/v2/nothing")

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == f"{PROBLEMS}/not-found"


async def test_a_wrong_method_is_a_405_problem(client: Client) -> None:
    response = await client.delete("/healthz")

    assert response.status_code == 405
    assert response.json()["type"] == f"{PROBLEMS}/method-not-allowed"


async def test_an_unexpected_error_is_a_500_problem_with_a_logged_request_id(
    services: ApiServices, settings: ApiSettings, seed: Seed, uow_factory: UnitOfWorkFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    broken = attrs.evolve(services, shop=BrokenShop(uow=uow_factory))
    app = create_app(services=broken, settings=settings)

    with caplog.at_level(logging.ERROR, logger="skincare_http"):
        async with AsyncTestClient(app=app) as client:
            response = await client.get("/v1/products", headers=bearer(seed.alice.id))

    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/internal-error"
    request_id = response.headers["x-request-id"]
    assert problem["request_id"] == request_id
    assert request_id in problem["detail"]
    for leak in ("Traceback", "SELECT", "RuntimeError", "relation", ".py"):
        assert leak not in response.text
    [record] = [r for r in caplog.records if r.getMessage() == "http.unhandled_error"]
    assert record.__dict__["request_id"] == request_id
    assert record.exc_info is not None
