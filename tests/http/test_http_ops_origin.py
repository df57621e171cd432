"""A state-changing request to the ops page must come from the ops page's own origin (scheme,
host and port): a valid CSRF token pair from another origin, another port of the same host
included, moves nothing; and the CSRF cookie is out of reach of scripts."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from skincare_core.jobs.job import Job
from skincare_core.testing.jobs import InMemoryQueues
from tests.http.ops_support import OPS_TOKEN, kill, ops_app

pytestmark = pytest.mark.anyio
BASE = "http://127.0.0.1:8765"
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}
FOREIGN = [
    {"Origin": "http://evil.test"},
    {"Origin": "http://127.0.0.1:8766"},
    {"Origin": "https://127.0.0.1:8765"},
    {"Origin": "http://localhost:8765"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": BASE, "Sec-Fetch-Site": "cross-site"},
]


async def _poisoned() -> InMemoryQueues:
    queues = InMemoryQueues()
    await kill(queues, Job(id="j1", type="send_email"), "boom")
    return queues


@pytest.mark.parametrize("headers", FOREIGN)
async def test_a_redrive_from_another_origin_moves_nothing(headers: dict[str, str]) -> None:
    queues = await _poisoned()
    async with AsyncTestClient(app=ops_app(queues), base_url=BASE) as client:
        await client.get("/ops/", headers=OPERATOR)
        form = {"job_id": "j1", "_csrf_token": client.cookies["csrftoken"]}
        answer = await client.post("/ops/redrive", data=form, headers={**OPERATOR, **headers})
        assert answer.status_code == 403
        assert await queues.count() == 1


@pytest.mark.parametrize("headers", [{"Origin": BASE, "Sec-Fetch-Site": "same-origin"}, {}])
async def test_a_redrive_from_the_page_itself_moves_the_job(headers: dict[str, str]) -> None:
    queues = await _poisoned()
    async with AsyncTestClient(app=ops_app(queues), base_url=BASE) as client:
        await client.get("/ops/", headers=OPERATOR)
        form = {"job_id": "j1", "_csrf_token": client.cookies["csrftoken"]}
        await client.post("/ops/redrive", data=form, headers={**OPERATOR, **headers})
        assert await queues.count() == 0


async def test_a_sign_in_from_another_port_is_refused() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues()), base_url=BASE) as client:
        await client.get("/ops/sign-in")
        form = {"token": OPS_TOKEN, "_csrf_token": client.cookies["csrftoken"]}
        foreign = {"Origin": "http://127.0.0.1:8766"}
        answer = await client.post("/ops/sign-in", data=form, headers=foreign)
        assert answer.status_code == 403
        assert "skincare_ops" not in client.cookies


async def test_the_csrf_cookie_is_http_only_and_the_form_carries_the_token() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues()), base_url=BASE) as client:
        page = await client.get("/ops/sign-in")
        cookie = page.headers["set-cookie"]
        assert cookie.startswith("csrftoken=")
        assert "httponly" in cookie.lower()
        assert f'value="{client.cookies["csrftoken"]}"' in page.text
