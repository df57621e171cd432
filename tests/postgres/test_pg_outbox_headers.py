"""The outbox stores the headers its HeaderSource gives (the trace context) with each job."""

from __future__ import annotations

import pytest
from attrs import evolve
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.job import new_job
from skincare_postgres import PostgresDatabase

pytestmark = pytest.mark.anyio
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


async def _stored_headers(engine: AsyncEngine) -> dict[str, dict[str, str]]:
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT type, body FROM jobs"))).all()
    return {row.type: dict(decode_job(row.body).headers) for row in rows}


async def test_each_added_job_carries_the_current_headers_its_own_winning(
    engine: AsyncEngine,
) -> None:
    db = PostgresDatabase(engine, job_headers=lambda: {"traceparent": PARENT})
    async with db() as uow:
        await uow.outbox.add(new_job("plain"))
        await uow.outbox.add(evolve(new_job("own"), headers={"traceparent": "mine"}))
    async with PostgresDatabase(engine)() as uow:
        await uow.outbox.add(new_job("untraced"))
    stored = await _stored_headers(engine)
    assert stored == {
        "plain": {"traceparent": PARENT},
        "own": {"traceparent": "mine"},
        "untraced": {},
    }
