"""Claims under a held xmin horizon: they start past the finished jobs' dead index entries, and
a job below the floor (a rolled-back claim, a late commit) is still found by the next sweep."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import enqueue
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.priority import DEFAULT_PRIORITY, LEAST_URGENT, MOST_URGENT, PRIORITIES
from skincare_postgres import PostgresQueue
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.claim_floor import ClaimFloor, PriorityFloors

pytestmark = pytest.mark.anyio
_FINISHED = 6_000
_T0 = datetime(2026, 12, 4, 7, tzinfo=UTC)


@asynccontextmanager
async def _held_xmin(engine: AsyncEngine) -> AsyncIterator[None]:
    """An idle-in-transaction session holding the horizon: vacuum can remove nothing."""
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(engine.url)) as conn:
        await conn.execute("SELECT txid_current()")
        yield
        await conn.rollback()


async def _run_through(queue: PostgresQueue, jobs: int, priorities: tuple[int, ...]) -> None:
    for _ in range(0, jobs, 500):
        await queue.enqueue_many(
            [
                Envelope(new_job("noop", n=str(n)), priority=priorities[n % len(priorities)])
                for n in range(500)
            ]
        )
        while leased := await queue.receive(100):
            await queue.ack_many(leased)
    assert await queue.receive(10) == []


async def _claim_ms(queue: PostgresQueue, priority: int) -> float:
    await enqueue(queue, new_job("probe"), priority=priority)
    began = time.perf_counter()
    [message] = await queue.receive(1)
    elapsed = (time.perf_counter() - began) * 1000
    await queue.ack_many([message])
    return elapsed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("finished", "probe"),
    [((DEFAULT_PRIORITY,), DEFAULT_PRIORITY), ((MOST_URGENT, 3), LEAST_URGENT)],
    ids=["one-priority", "probe-behind-two-priorities"],
)
async def test_claims_skip_what_a_held_horizon_keeps_and_a_sweep_reads_it_all(
    engine: AsyncEngine, finished: tuple[int, ...], probe: int
) -> None:
    # The second case: the finished jobs' entries lie in two more urgent priorities' ranges,
    # which every claim of the probe's priority reads first (each from its own floor).
    async with _held_xmin(engine), PostgresQueue(engine) as queue:
        await _run_through(queue, _FINISHED, finished)
        floored = min([await _claim_ms(queue, probe) for _ in range(5)])
        # A new queue's first claim is a sweep from the index's start, as every claim was.
        async with PostgresQueue(engine) as fresh:
            swept = await _claim_ms(fresh, probe)
    assert floored * 4 < swept, (floored, swept)


async def test_a_job_due_below_the_floor_is_claimed_by_the_next_sweep(
    engine: AsyncEngine,
) -> None:
    # Sweeps every second rather than every five: the next sweep comes sooner, the same way.
    async with PostgresQueue(engine, claim_sweep_every=timedelta(seconds=1)) as queue:
        await enqueue(queue, new_job("recent"))
        [recent] = await queue.receive(1)
        await queue.ack_many([recent])
        # As a long transaction's insert committed late: due well before the floor.
        old = new_job("late")
        await enqueue(queue, old, not_before=datetime.now(UTC) - timedelta(hours=1))
        deadline = time.monotonic() + 8
        found: list[Message] = []
        while not found and time.monotonic() < deadline:
            found = await queue.receive(1)
    assert [m.job for m in found] == [old]


@given(
    dues=st.lists(st.lists(st.integers(0, 10_000), max_size=5), max_size=20),
    failures=st.sets(st.integers(0, 19)),
)
def test_the_floor_is_below_the_last_claims_earliest_due_and_sweeps_follow_failures(
    dues: list[list[int]], failures: set[int]
) -> None:
    now = [0.0]
    floor = ClaimFloor(sweep_every=5.0, slack=timedelta(seconds=1), clock=lambda: now[0])
    assert floor.for_claim() is None
    earliest = None
    for n, claim in enumerate(dues):
        now[0] += 1.0
        used = floor.for_claim()
        assert used is None or (earliest is not None and used <= earliest)
        if n in failures:
            floor.failed()
            assert floor.for_claim() is None
            continue
        times = [_T0 + timedelta(seconds=s) for s in claim]
        floor.claimed(times)
        earliest = min(times, default=earliest)
        if times:
            assert floor.floor == min(times) - timedelta(seconds=1)


@given(
    claims=st.lists(
        st.lists(st.tuples(st.sampled_from(PRIORITIES), st.integers(0, 10_000)), max_size=6),
        max_size=20,
    )
)
def test_each_prioritys_floor_is_below_the_earliest_due_a_claim_returned_of_it(
    claims: list[list[tuple[int, int]]],
) -> None:
    now = [0.0]
    floors = PriorityFloors(sweep_every=5.0, slack=timedelta(seconds=1), clock=lambda: now[0])
    assert set(floors.for_claim().values()) == {None}
    for claim in claims:
        now[0] += 1.0
        before = floors.floors
        floors.claimed((p, _T0 + timedelta(seconds=s)) for p, s in claim)
        for priority in PRIORITIES:
            dues = [_T0 + timedelta(seconds=s) for p, s in claim if p == priority]
            expected = min(dues) - timedelta(seconds=1) if dues else before[priority]
            assert floors.floors[priority] == expected
    floors.failed()
    assert set(floors.for_claim().values()) == {None}
