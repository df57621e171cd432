"""Postgres dead letters: a row whose body no longer decodes is buried and still shown."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.job import Job
from skincare_postgres import PostgresDeadLetters, PostgresQueue

pytestmark = pytest.mark.anyio


async def test_a_body_that_does_not_decode_is_buried_and_shown_by_id_and_type(
    queue: PostgresQueue, engine: AsyncEngine
) -> None:
    async with engine.begin() as conn:
        statement = "INSERT INTO jobs (id, type, body) VALUES ('j-1', 'shop.lost', 'not json')"
        await conn.execute(text(statement))
    assert await queue.receive(1) == []
    dead_letters = PostgresDeadLetters(engine)
    dead = await dead_letters.get("j-1")
    assert dead is not None
    assert (dead.job, dead.attempts) == (Job(id="j-1", type="shop.lost"), 1)
    assert dead.error != ""
    assert [d.job for d in await dead_letters.list()] == [dead.job]
