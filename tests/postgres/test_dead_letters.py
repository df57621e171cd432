"""Postgres dead letters: a row whose body no longer decodes, or names another job than its row,
is buried at claim time and still shown."""

from __future__ import annotations

import uuid

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import Burial
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


async def test_a_row_whose_body_names_another_id_is_dead_once_and_never_claimed_again(
    queue: PostgresQueue, engine: AsyncEngine
) -> None:
    # As another program would insert it: a UUID row id, a body whose id is "x".
    row_id = str(uuid.uuid4())
    body = '{"id": "x", "type": "shop.lost", "payload": {}}'
    async with engine.begin() as conn:
        statement = "INSERT INTO jobs (id, type, body) VALUES (:id, 'shop.lost', :body)"
        await conn.execute(text(statement), {"id": row_id, "body": body})
    dead_letters = PostgresDeadLetters(engine)
    for _ in range(2):
        # What the engine does with a job that fails for good: bury what it received.
        received = await queue.receive(1)
        await queue.dead_letter_many([Burial(m, "failed for good") for m in received])
        await anyio.sleep(1.2)  # past the fixture's 1 s lease
    assert await queue.receive(1) == []
    assert await dead_letters.count() == 1
    dead = await dead_letters.get(row_id)
    assert dead is not None
    assert (dead.job.id, dead.job.type, dead.attempts) == (row_id, "shop.lost", 1)
    assert "x" in dead.error
