"""Job ids no store can hold (a NUL: PostgreSQL refuses it in text) answer 404 or 400 from the
ops page over the real Postgres adapters, never a 500."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.jobs.ops import OpsService
from skincare_http.ops import create_ops_app
from skincare_postgres import (
    PostgresDeadLetters,
    PostgresJobActions,
    PostgresJobOutcomes,
    PostgresPauses,
    PostgresQueueStats,
    create_engine,
)
from tests.http.ops_support import NAMES, OPS_TOKEN, SETTINGS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}


@pytest.fixture
async def pg_ops_app(http_database_url: str) -> AsyncIterator[Litestar]:
    engine = create_engine(http_database_url)
    ops = OpsService(
        dead_letters=PostgresDeadLetters(engine),
        stats=PostgresQueueStats(engine),
        queue_names=NAMES,
        outcomes=PostgresJobOutcomes(engine),
        pauses=PostgresPauses(engine),
        actions=PostgresJobActions(engine),
    )
    yield create_ops_app(ops=ops, settings=SETTINGS)
    await engine.dispose()


@pytest.mark.parametrize(
    "path",
    [
        "/ops/jobs/%00",
        "/ops/jobs/abc%00def",
        "/ops/jobs/%FF%FE",
        "/ops/jobs/" + "x" * 600,
        "/ops/jobs/no-such-job",
        "/ops/jobs/'%3B%20DROP%20TABLE%20jobs",
        "/ops/act?action=run-now&job_id=%00",
        "/ops/act?action=cancel&job_id=no-such-job",
        "/ops/act?action=cancel&job_id=",
        "/ops/act?action=explode&job_id=j1",
    ],
)
async def test_a_nul_in_a_job_page_is_not_found(pg_ops_app: Litestar, path: str) -> None:
    async with AsyncTestClient(app=pg_ops_app) as client:
        assert (await client.get(path, headers=OPERATOR)).status_code == 404


async def test_a_nul_in_a_preview_is_a_bad_request(pg_ops_app: Litestar) -> None:
    async with AsyncTestClient(app=pg_ops_app) as client:
        url = "/ops/preview?action=redrive&job_id=%00"
        assert (await client.get(url, headers=OPERATOR)).status_code == 400


async def test_a_nul_in_a_redrive_is_a_bad_request(pg_ops_app: Litestar) -> None:
    async with AsyncTestClient(app=pg_ops_app) as client:
        await client.get("/ops/", headers=OPERATOR)
        form = {"job_id": "a\0b", "_csrf_token": client.cookies["csrftoken"]}
        answer = await client.post("/ops/redrive", data=form, headers=OPERATOR)
        assert answer.status_code == 400


@pytest.mark.parametrize("action", ["run-now", "cancel"])
async def test_a_hostile_id_in_an_action_is_not_found(pg_ops_app: Litestar, action: str) -> None:
    async with AsyncTestClient(app=pg_ops_app) as client:
        await client.get("/ops/", headers=OPERATOR)
        for job_id in ("a\0b", "x" * 600, ""):
            form = {"job_id": job_id, "_csrf_token": client.cookies["csrftoken"]}
            answer = await client.post(f"/ops/{action}", data=form, headers=OPERATOR)
            assert answer.status_code == 404
