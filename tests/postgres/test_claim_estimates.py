"""Claims and acks under a held xmin horizon after an analyze that saw almost no live rows: the
planner's row estimate of `jobs` is then about one row while the table holds 100,000 finished
jobs' dead tuples (and, a moment later, a backlog). Neither may depend on that estimate."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import cast

import psycopg
import pytest

from skincare_core.jobs.priority import PRIORITIES
from skincare_postgres import PostgresQueue, create_engine, jobs_sql, upgrade
from skincare_postgres.engine import libpq_conninfo

pytestmark = pytest.mark.anyio

_FINISHED = 100_000
_BACKLOG = 5_000
_Conn = psycopg.AsyncConnection[tuple[object, ...]]


async def _add(admin: _Conn, rows: int, due: str = "now()") -> None:
    await admin.execute(
        "INSERT INTO jobs (id, type, body, available_at) SELECT id, 'noop',"
        " json_build_object('id', id, 'type', 'noop', 'payload', json_build_object())::text,"
        f" {due} FROM (SELECT gen_random_uuid()::text AS id FROM generate_series(1, %s)) AS fresh",
        [rows],
    )


async def _finish(admin: _Conn, jobs: int) -> None:
    """Enqueued, leased and acked: two tuple versions a job, neither removable under the hold."""
    for _ in range(0, jobs, 10_000):
        await _add(admin, 10_000, "now() - interval '1 hour'")
        await admin.execute(
            "UPDATE jobs SET attempts = 1, receipt = gen_random_uuid(),"
            " available_at = available_at + interval '30 seconds'"
        )
        await admin.execute("DELETE FROM jobs")


@asynccontextmanager
async def _stalled(url: str) -> AsyncIterator[_Conn]:
    """Under a held horizon: finished jobs, then a vacuum and analyze that see one live row
    (as autovacuum's do between two bursts), then a backlog; yields an autocommit connection."""
    conninfo = libpq_conninfo(url)
    async with (
        await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as admin,
        await psycopg.AsyncConnection.connect(conninfo) as holder,
    ):
        # Autovacuum would analyze again mid-test; the test runs the one analyze itself.
        await admin.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
        await holder.execute("SELECT txid_current()")
        await _finish(admin, _FINISHED)
        await _add(admin, 1)
        await admin.execute("VACUUM ANALYZE jobs")
        await _add(admin, _BACKLOG)
        yield admin
        await holder.rollback()


async def _explained(admin: _Conn, statement: str, params: Mapping[str, object]) -> tuple[int, int]:
    """Rows and buffers of one run of `statement`, custom-planned as on the queue's own
    connections (and rolled back)."""
    await admin.execute("SET plan_cache_mode = force_custom_plan")
    async with admin.transaction(force_rollback=True):
        explain = f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}"
        row = await (await admin.execute(explain, params)).fetchone()
    assert row is not None
    plan = cast("list[dict[str, dict[str, int]]]", row[0])[0]["Plan"]
    return plan["Actual Rows"], plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]


async def _claim_blocks(admin: _Conn, limit: int) -> tuple[int, int]:
    """Rows claimed and buffers read by one floored claim, on a connection set up as the
    queue's claim connection is (rolled back)."""
    await admin.execute("SET enable_sort = off")
    floor = datetime.now(UTC) - timedelta(minutes=1)
    floors = jobs_sql.floor_params(dict.fromkeys(PRIORITIES, floor))
    params = {"queue": "default", **floors, "limit": limit, "visibility": "30 s"}
    return await _explained(admin, jobs_sql.CLAIM, params)


@asynccontextmanager
async def _stalled_queue(
    new_database: Callable[[], str], *, history: bool = True
) -> AsyncIterator[tuple[_Conn, PostgresQueue]]:
    """A fresh database in the stall (`_stalled`), its estimate checked, and a queue on it."""
    url = new_database()
    upgrade(url)
    engine = create_engine(url)
    try:
        async with _stalled(url) as admin, PostgresQueue(engine, history=history) as queue:
            assert await _estimate(admin) == 1
            yield admin, queue
    finally:
        await engine.dispose()


async def _estimate(admin: _Conn) -> float:
    row = await (
        await admin.execute("SELECT reltuples FROM pg_class WHERE relname = 'jobs'")
    ).fetchone()
    assert row is not None
    return float(str(row[0]))


async def test_a_claim_fetches_only_its_rows_when_the_estimate_is_about_one_row(
    new_database: Callable[[], str],
) -> None:
    async with _stalled_queue(new_database) as (admin, queue):
        claimed, blocks = await _claim_blocks(admin, 100)
        fastest = float("inf")
        for _ in range(5):
            began = time.perf_counter()
            assert len(await queue.receive(100)) == 100
            fastest = min(fastest, time.perf_counter() - began)
    # A join planned from that estimate walks the whole primary key, or the whole table once
    # per claimed row; fetching each locked row by its ctid reads a few blocks a row.
    assert claimed == 100
    assert blocks < 3_000, blocks
    assert fastest < 0.05, fastest


async def test_an_ack_reads_only_its_rows_when_the_estimate_is_about_one_row(
    new_database: Callable[[], str],
) -> None:
    async with _stalled_queue(new_database, history=False) as (admin, queue):
        claimed = await queue.receive(10)
        ids = [m.job.id for m in claimed]
        receipts = [m.receipt.split(":", 1)[0] for m in claimed]
        _, blocks = await _explained(admin, jobs_sql.ACK, {"ids": ids, "receipts": receipts})
        await queue.ack_many(claimed)
        left = await (await admin.execute("SELECT count(*) FROM jobs")).fetchone()
    # Walking the primary key from its start reads every finished job's entry (some 200,000
    # blocks here); looking each id up reads a few blocks a row.
    assert blocks < 1_000, blocks
    assert left == (_BACKLOG + 1 - 10,)
