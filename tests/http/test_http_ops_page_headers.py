"""Every ops response forbids framing (X-Frame-Options and CSP frame-ancestors), MIME sniffing
and referrers, and none is stored by a cache; signing out (a CSRF-checked POST) clears the
session cookie."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from skincare_core.jobs.job import Job
from skincare_core.testing.jobs import InMemoryQueues
from tests.http.ops_support import OPS_TOKEN, kill, ops_app

pytestmark = pytest.mark.anyio
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}
PAGES = [
    ("/ops/", OPERATOR),
    ("/ops/jobs/j1", OPERATOR),
    ("/ops/preview?action=purge", OPERATOR),
    ("/ops/sign-in", {}),
    ("/ops/", {}),
    ("/ops/jobs/nobody", OPERATOR),
]


@pytest.mark.parametrize(("path", "headers"), PAGES)
async def test_no_page_can_be_framed_or_cached(path: str, headers: dict[str, str]) -> None:
    queues = InMemoryQueues()
    await kill(queues, Job(id="j1", type="send_email"), "boom")
    async with AsyncTestClient(app=ops_app(queues)) as client:
        answer = await client.get(path, headers=headers)
        assert answer.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] in ("no-referrer", "same-origin")
        assert "no-store" in answer.headers["cache-control"]


async def _signed_in(client: AsyncTestClient) -> None:  # type: ignore[type-arg]
    await client.get("/ops/sign-in")
    form = {"token": OPS_TOKEN, "_csrf_token": client.cookies["csrftoken"]}
    await client.post("/ops/sign-in", data=form)
    assert (await client.get("/ops/")).status_code == 200


async def test_signing_out_clears_the_session() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        await _signed_in(client)
        form = {"_csrf_token": client.cookies["csrftoken"]}
        signed_out = await client.post("/ops/sign-out", data=form, follow_redirects=False)
        assert signed_out.status_code in (302, 303)
        assert "skincare_ops" not in client.cookies
        assert (await client.get("/ops/")).status_code == 401


async def test_signing_out_without_the_csrf_token_keeps_the_session() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues())) as client:
        await _signed_in(client)
        assert (await client.post("/ops/sign-out", data={})).status_code == 403
        assert (await client.get("/ops/")).status_code == 200
