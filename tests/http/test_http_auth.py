"""Bearer JWT: every route but the webhook, the probes and the schema needs a valid token."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jwt
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.http.http_support import JWT_ISSUER, JWT_SECRET, Seed, bearer

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
UNAUTHORIZED = "https://skincare.example/problems/unauthorized"

SIGNED_IN_ROUTES = [
    ("GET", "/v1/products"),
    ("GET", "/v1/cart"),
    ("PUT", "/v1/cart/items/1"),
    ("POST", "/v1/orders"),
    ("GET", "/v1/orders/1"),
]


def _token(**claims: object) -> dict[str, str]:
    now = datetime.now(UTC)
    payload = {"sub": "1", "iss": JWT_ISSUER, "iat": now, "exp": now + timedelta(minutes=5)}
    payload.update(claims)
    payload = {key: value for key, value in payload.items() if value is not None}
    secret = str(payload.pop("secret", JWT_SECRET))
    return {"Authorization": f"Bearer {jwt.encode(payload, secret, algorithm='HS256')}"}


@pytest.mark.parametrize(("method", "path"), SIGNED_IN_ROUTES)
async def test_signed_in_routes_refuse_a_request_without_token(
    client: Client, method: str, path: str
) -> None:
    response = await client.request(method, path, json={"quantity": 1})

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    problem = response.json()
    assert problem["type"] == UNAUTHORIZED
    assert problem["status"] == 401
    assert problem["title"]
    assert problem["detail"]


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(_token(exp=datetime.now(UTC) - timedelta(seconds=5)), id="expired"),
        pytest.param(_token(iss="someone-else"), id="wrong-issuer"),
        pytest.param(_token(iss=None), id="no-issuer"),
        pytest.param(_token(secret="another-secret-of-at-least-32-bytes!!"), id="wrong-secret"),
        pytest.param(_token(sub="alice"), id="sub-not-an-id"),
        pytest.param(_token(sub="0"), id="sub-zero"),
        pytest.param(_token(sub="\u00b2"), id="sub-superscript-two"),
        pytest.param(_token(sub="\u0661"), id="sub-arabic-indic-one"),
        pytest.param(_token(sub="+1"), id="sub-signed"),
        pytest.param(_token(sub=" 1"), id="sub-spaced"),
        pytest.param(_token(sub=str(2**63)), id="sub-over-bigint"),
        pytest.param(_token(sub="9" * 5000), id="sub-5000-digits"),
        pytest.param({"Authorization": "Bearer not-a-jwt"}, id="garbage"),
        pytest.param({"Authorization": "Bearer "}, id="empty"),
        pytest.param(
            {"Authorization": bearer(1)["Authorization"].replace("Bearer", "Basic")},
            id="not-bearer",
        ),
    ],
)
async def test_bad_tokens_are_401_problems(client: Client, headers: dict[str, str]) -> None:
    response = await client.get("/v1/cart", headers=headers)

    assert response.status_code == 401
    assert response.json()["type"] == UNAUTHORIZED


async def test_a_valid_token_signs_its_subject_in(client: Client, seed: Seed) -> None:
    response = await client.get("/v1/cart", headers=bearer(seed.alice.id))

    assert response.status_code == 200


async def test_none_algorithm_tokens_are_refused(client: Client) -> None:
    now = datetime.now(UTC)
    claims = {"sub": "1", "iss": JWT_ISSUER, "exp": now + timedelta(minutes=5)}
    unsigned = jwt.encode(claims, "", algorithm="none")

    response = await client.get("/v1/cart", headers={"Authorization": f"Bearer {unsigned}"})

    assert response.status_code == 401


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/schema/openapi.json"])
async def test_probes_and_schema_need_no_token(client: Client, path: str) -> None:
    assert (await client.get(path)).status_code == 200
