"""The ops page lets operators in (ops token or admin JWT), answers 403 to a plain user, and
rejects a state-changing POST without the CSRF token."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from skincare_core.jobs.job import Job
from skincare_core.testing.jobs import InMemoryQueues
from tests.http.ops_support import OPS_TOKEN, kill, ops_app, token

pytestmark = pytest.mark.anyio


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


async def test_only_operators_get_in() -> None:
    queues = InMemoryQueues()
    await kill(queues, Job(id="j1", type="send_email"), "SMTPError: refused")
    async with AsyncTestClient(app=ops_app(queues)) as client:
        assert (await client.get("/ops/")).status_code == 401
        assert (await client.get("/ops/", headers=bearer(token(None)))).status_code == 403
        assert (await client.get("/ops/", headers=bearer("not-a-token"))).status_code == 401
        admin = await client.get("/ops/", headers=bearer(token("admin")))
        assert admin.status_code == 200
        assert "SMTPError: refused" in admin.text
        assert (await client.get("/ops/", headers=bearer(OPS_TOKEN))).status_code == 200


async def test_a_post_without_the_csrf_token_moves_nothing() -> None:
    queues = InMemoryQueues()
    await kill(queues, Job(id="j1", type="send_email"), "boom")
    async with AsyncTestClient(app=ops_app(queues)) as client:
        await client.get("/ops/", headers=bearer(OPS_TOKEN))  # sets the CSRF cookie
        forged = await client.post("/ops/redrive", data={"job_id": "j1"}, headers=bearer(OPS_TOKEN))
        assert forged.status_code == 403
        assert await queues.count() == 1
        refused = await client.post("/ops/redrive", headers=bearer(token(None)), data={})
        assert refused.status_code == 403


async def test_redrive_with_the_csrf_token_moves_the_job() -> None:
    queues = InMemoryQueues()
    await kill(queues, Job(id="j1", type="send_email"), "boom")
    async with AsyncTestClient(app=ops_app(queues)) as client:
        preview = await client.get(
            "/ops/preview?action=redrive&job_id=j1", headers=bearer(OPS_TOKEN)
        )
        assert "1 job(s) would move" in preview.text
        csrf = client.cookies["csrftoken"]
        form = {"job_id": "j1", "_csrf_token": csrf}
        moved = await client.post("/ops/redrive", data=form, headers=bearer(OPS_TOKEN))
        assert moved.status_code in (200, 302, 303)
        assert await queues.count() == 0
        assert queues.queue("default").depth == 1
