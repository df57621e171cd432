"""The OpenAPI 3.1 document lists every endpoint, its auth, and every problem type."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_http import ALL_PROBLEM_TYPES

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]

OPERATIONS = {
    ("get", "/v1/products"), ("get", "/v1/cart"), ("put", "/v1/cart/items/{product_id}"),
    ("post", "/v1/orders"), ("get", "/v1/orders/{order_id}"), ("post", "/v1/payments/webhook"),
    ("get", "/healthz"), ("get", "/readyz"),
}  # fmt: skip
PUBLIC = {("post", "/v1/payments/webhook"), ("get", "/healthz"), ("get", "/readyz")}


@pytest.fixture
async def document(client: Client) -> dict[str, Any]:
    response = await client.get("/schema/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


async def test_it_is_openapi_3_1_with_every_operation(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    assert set(_operations(document)) == OPERATIONS


async def test_signed_in_operations_require_the_bearer_scheme(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["BearerToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    for key, operation in _operations(document).items():
        expected: list[dict[str, list[str]]] | None = (
            None if key in PUBLIC else [{"BearerToken": []}]
        )
        assert operation.get("security") == expected, key


async def test_every_problem_type_is_documented(document: dict[str, Any]) -> None:
    described = document["info"]["description"] + "".join(
        response.get("description", "")
        for operation in _operations(document).values()
        for response in operation["responses"].values()
    )
    for problem in ALL_PROBLEM_TYPES:
        assert problem.uri in described, problem.slug


async def test_error_responses_are_problem_json(document: dict[str, Any]) -> None:
    for key, operation in _operations(document).items():
        errors = {s: r for s, r in operation["responses"].items() if int(s) >= 400}
        assert "500" in errors, key
        for response in errors.values():
            assert list(response["content"]) == ["application/problem+json"], key


async def test_checkout_documents_its_header_and_location(document: dict[str, Any]) -> None:
    operation = _operations(document)[("post", "/v1/orders")]
    [key] = [p for p in operation["parameters"] if p["name"] == "Idempotency-Key"]
    assert (key["in"], key["required"]) == ("header", True)
    assert "Location" in operation["responses"]["201"]["headers"]
    assert {"400", "401", "409"} <= set(operation["responses"])


async def test_a_positive_amount_is_documented_as_exclusive_minimum_zero(
    document: dict[str, Any],
) -> None:
    amount = document["components"]["schemas"]["PaymentEventBody"]["properties"]["amount_rupiah"]
    assert amount["exclusiveMinimum"] == 0


async def test_every_operation_documents_the_header_cap_and_storage_outages(
    document: dict[str, Any],
) -> None:
    probes = {("get", "/healthz"), ("get", "/readyz")}
    for key, operation in _operations(document).items():
        assert "431" in operation["responses"], key
        if key not in probes:
            outage = operation["responses"]["503"]["description"]
            assert "/problems/service-unavailable" in outage, key
