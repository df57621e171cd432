"""Every link to a dead job quotes its id whole, so an id holding `/`, `..`, `%`, `?` or `#`
leads to that job's page (and its redrive preview), never to another page."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest
from litestar.testing import AsyncTestClient

from skincare_core.jobs.job import Job
from skincare_core.testing.jobs import InMemoryQueues
from tests.http.ops_support import OPS_TOKEN, kill, ops_app

pytestmark = pytest.mark.anyio
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}
BASE = "http://testserver.local/ops/"
IDS = ["../sign-in", "a/b", "50% off?x=1#top", "../..", "é/ü", "a//b/"]


def _link(page: str, pattern: str) -> str:
    found = re.search(pattern, page)
    assert found, pattern
    return urljoin(BASE, str(found[1]).replace("&amp;", "&"))


@pytest.mark.parametrize("job_id", IDS)
async def test_a_dead_job_link_leads_to_that_job(job_id: str) -> None:
    queues = InMemoryQueues()
    await kill(queues, Job(id=job_id, type="send_email"), "boom")
    async with AsyncTestClient(app=ops_app(queues), base_url=BASE) as client:
        overview = (await client.get(BASE, headers=OPERATOR)).text
        job_page = await client.get(
            _link(overview, r'<a href="(/ops/jobs/[^"]*)"'), headers=OPERATOR
        )
        assert job_page.status_code == 200
        assert f"Dead job {job_id}".replace("&", "&amp;") in job_page.text
        preview_url = _link(job_page.text, r'id="redrive-one" href="([^"]*)"')
        preview = await client.get(preview_url, headers=OPERATOR)
        assert "1 job(s) would move" in preview.text
