"""The shipped migrations: up from empty, down to base, up again, no drift from the metadata,
and jobs queued under an older schema kept through an upgrade."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import create_engine as create_async_engine
from skincare_postgres import downgrade, metadata, postgres_backend, upgrade

_STRICT = {"compare_type": True, "compare_server_default": True}
_INSERT_0001 = text(
    "INSERT INTO jobs (id, type, body, status, attempts, available_at)"
    " VALUES (:id, :type, :body, :status, :attempts, now() + make_interval(secs => :attempts))"
)


def _row_0001(job: Job, status: str, attempts: int) -> dict[str, object]:
    return {
        "id": job.id,
        "type": job.type,
        "body": encode_job(job),
        "status": status,
        "attempts": attempts,
    }


def _state(url: str) -> tuple[set[str], list[object]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            diff = compare_metadata(MigrationContext.configure(conn, opts=_STRICT), metadata)
    finally:
        engine.dispose()
    return tables, diff


@pytest.mark.slow
def test_upgrade_downgrade_upgrade_matches_the_metadata(new_database: Callable[[], str]) -> None:
    url = new_database()
    expected = {table.name for table in metadata.sorted_tables}

    upgrade(url)
    tables, diff = _state(url)
    assert tables == expected | {"alembic_version"}
    assert diff == []

    downgrade(url)
    assert _state(url)[0] == {"alembic_version"}

    upgrade(url)
    tables, diff = _state(url)
    assert tables == expected | {"alembic_version"}
    assert diff == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_jobs_queued_under_0001_survive_the_upgrade_and_run(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, "0001")
    waiting, retried, dead = new_job("legacy", n="1"), new_job("legacy", n="2"), new_job("legacy")
    # A job waiting now, one waiting out a retry's backoff (one attempt made), and a dead one.
    rows = [(waiting, "ready", 0), (retried, "ready", 1), (dead, "dead", 0)]
    legacy = create_engine(url)
    try:
        with legacy.begin() as conn:
            for job, status, attempts in rows:
                conn.execute(_INSERT_0001, _row_0001(job, status, attempts))
    finally:
        legacy.dispose()
    upgrade(url)
    ran: list[Job] = []

    async def record(job: Job) -> None:
        ran.append(job)

    router = Router()
    router.register("legacy", record)
    engine = create_async_engine(url)
    try:
        async with postgres_backend(engine, poll_interval=timedelta(seconds=0.2)) as backend:
            [buried] = await backend.dead_letters.list(queue="default")
            assert buried.job == dead
            async with anyio.create_task_group() as tg:
                tg.start_soon(Worker(queue=backend.queue(), router=router).run)
                with anyio.fail_after(10):
                    while len(ran) < 2:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    assert sorted(job.id for job in ran) == sorted([waiting.id, retried.id])
