"""Receives that wait while a claim runs share the next claim; each gets its own rows."""

from __future__ import annotations

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Message, new_job
from skincare_postgres import PostgresQueue
from skincare_postgres.jobs.claim_batcher import ClaimBatcher

pytestmark = pytest.mark.anyio


class Statements:
    """A claim statement that waits for `gate` and returns `limit` numbered rows (or fails)."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.limits: list[int] = []
        self.next_row = 0
        self.fail_on = fail_on
        self.gate = anyio.Event()

    async def run(self, limit: int) -> list[int]:
        self.limits.append(limit)
        await self.gate.wait()
        if len(self.limits) == self.fail_on:
            raise ConnectionError("claim lost")
        rows = list(range(self.next_row, self.next_row + limit))
        self.next_row += limit
        return rows


async def claim_in_line(statements: Statements, limits: list[int]) -> dict[int, object]:
    """Start a claim per limit, each once the previous one waits, while the first statement
    runs; then let the statements finish. Index -> rows or error."""
    batcher = ClaimBatcher(statements.run)
    got: dict[int, object] = {}

    async def claim(index: int, limit: int) -> None:
        try:
            got[index] = await batcher.claim(limit)
        except ConnectionError as error:
            got[index] = error

    async with anyio.create_task_group() as tg:
        for index, limit in enumerate(limits):
            tg.start_soon(claim, index, limit)
            await anyio.wait_all_tasks_blocked()
        statements.gate.set()
    return got


async def test_claims_waiting_in_line_share_one_statement_and_split_its_rows() -> None:
    statements = Statements()
    got = await claim_in_line(statements, [2, 3, 4, 5])
    assert statements.limits == [2, 12]
    assert got == {0: [0, 1], 1: [2, 3, 4], 2: [5, 6, 7, 8], 3: [9, 10, 11, 12, 13]}


async def test_a_failed_claim_fails_only_its_caller() -> None:
    statements = Statements(fail_on=2)
    got = await claim_in_line(statements, [2, 3, 4, 5])
    assert statements.limits == [2, 12, 9]
    assert isinstance(got.pop(1), ConnectionError)
    assert got == {0: [0, 1], 2: [2, 3, 4, 5], 3: [6, 7, 8, 9, 10]}


@pytest.mark.slow
async def test_concurrent_receives_get_every_job_once(queue: PostgresQueue) -> None:
    jobs = [new_job("batching", n=str(n)) for n in range(60)]
    await queue.enqueue_many([Envelope(job) for job in jobs])
    received: list[Message] = []

    async def receive() -> None:
        received.extend(await queue.receive(10))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(receive)
    assert len(received) == 60
    assert sorted(m.job.id for m in received) == sorted(job.id for job in jobs)
    await queue.ack_many(received)
    assert await queue.receive(10) == []
