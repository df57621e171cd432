"""Request ids and the access line: an incoming X-Request-ID is kept if sane, one line per request
(method, route template, status, duration), and the id is bound to every line of the request."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import attrs
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.log_context import bound_fields
from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.models import Product
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_http import ApiServices, ApiSettings, create_app
from tests.http.http_support import Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]


class Lines(logging.Handler):
    """Each line of the skincare_http loggers with its fields and the fields bound then."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[dict[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        fields = {k: v for k, v in record.__dict__.items() if k in ACCESS_FIELDS}
        self.lines.append({"message": record.getMessage(), **bound_fields(), **fields})


ACCESS_FIELDS = ("method", "route", "status", "duration_ms")


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler, logger = Lines(), logging.getLogger("skincare_http")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(previous)


def _access(lines: Lines) -> list[dict[str, object]]:
    found = [dict(line) for line in lines.lines if line["message"] == "http.request"]
    for line in found:
        assert isinstance(line.pop("duration_ms"), float)
    return found


async def test_a_sane_incoming_request_id_is_kept_and_returned(client: Client) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": "lb-7f3a:01.x_y"})
    assert response.headers["x-request-id"] == "lb-7f3a:01.x_y"


@pytest.mark.parametrize(
    "incoming", [b"", b"a b", b"x" * 129, b"id\xe9", b'{"level":"ERROR"}'], ids=repr
)
async def test_an_insane_incoming_request_id_is_replaced(client: Client, incoming: bytes) -> None:
    response = await client.get("/healthz", headers={b"X-Request-ID": incoming})
    made = response.headers["x-request-id"]
    assert made.encode() != incoming
    assert len(made) == 32
    int(made, 16)


async def test_one_access_line_per_request_with_the_route_template_if_one_matched(
    client: Client, seed: Seed, lines: Lines
) -> None:
    auth = {**bearer(seed.alice.id), "X-Request-ID": "req-order"}
    await client.get("/v1/orders/12345", headers=auth)
    await client.delete("/healthz", headers={"X-Request-ID": "req-405"})
    await client.get("/v2/nowhere", headers={"X-Request-ID": "req-404"})

    assert _access(lines) == [
        {
            "message": "http.request",
            "request_id": "req-order",
            "method": "GET",
            "route": "/v1/orders/{order_id}",
            "status": 404,
        },
        {
            "message": "http.request",
            "request_id": "req-405",
            "method": "DELETE",
            "route": None,
            "status": 405,
        },
        {
            "message": "http.request",
            "request_id": "req-404",
            "method": "GET",
            "route": None,
            "status": 404,
        },
    ]


class BrokenShop(ShopService):
    """A shop whose catalogue read fails."""

    async def products(self) -> list[Product]:
        raise RuntimeError("the catalogue is broken")


async def test_every_line_of_a_request_carries_its_id(
    services: ApiServices,
    settings: ApiSettings,
    seed: Seed,
    uow_factory: UnitOfWorkFactory,
    lines: Lines,
) -> None:
    app = create_app(
        services=attrs.evolve(services, shop=BrokenShop(uow=uow_factory)), settings=settings
    )
    async with AsyncTestClient(app=app) as client:
        headers = {**bearer(seed.alice.id), "X-Request-ID": "req-500"}
        response = await client.get("/v1/products", headers=headers)

    assert response.status_code == 500
    assert [(line["message"], line["request_id"]) for line in lines.lines] == [
        ("http.unhandled_error", "req-500"),
        ("http.request", "req-500"),
    ]
    assert _access(lines)[0]["status"] == 500
