"""Credentials the ops page cannot use (non-ASCII text among them) are a 401, before and after
signing in with one; the sign-in form refuses a wrong token without setting the cookie."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from skincare_core.testing.jobs import InMemoryQueues
from tests.http.ops_support import OPS_TOKEN, ops_app

pytestmark = pytest.mark.anyio
NON_ASCII = "jeton-opérateur-été"


async def test_a_non_ascii_bearer_token_is_a_401() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        header = {b"Authorization": f"Bearer {NON_ASCII}".encode()}
        assert (await client.get("/ops/", headers=header)).status_code == 401


async def test_signing_in_with_a_non_ascii_token_is_refused() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        await client.get("/ops/sign-in")
        form = {"token": NON_ASCII, "_csrf_token": client.cookies["csrftoken"]}
        assert (await client.post("/ops/sign-in", data=form)).status_code == 401
        assert (await client.get("/ops/")).status_code == 401


async def test_a_non_ascii_cookie_is_a_401() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        cookie = {b"Cookie": f"skincare_ops={NON_ASCII}".encode()}
        assert (await client.get("/ops/", headers=cookie)).status_code == 401


async def test_signing_in_with_the_ops_token_lets_the_operator_in() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        await client.get("/ops/sign-in")
        form = {"token": OPS_TOKEN, "_csrf_token": client.cookies["csrftoken"]}
        signed_in = await client.post("/ops/sign-in", data=form, follow_redirects=False)
        assert signed_in.status_code in (302, 303)
        assert (await client.get("/ops/")).status_code == 200
