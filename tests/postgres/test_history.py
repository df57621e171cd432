"""The Postgres history beyond the contract: the migration keeps dead jobs findable, the trace
and request ids, history off, unreadable bodies, one cleaner at a time, and the search's plans."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.history import HistoryQuery, Retention
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Queue
from skincare_postgres import PostgresQueue, downgrade, upgrade
from skincare_postgres.jobs.history import PostgresJobHistory
from tests.postgres.statements import run_sql

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
HISTORY = "0011"
_TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def _receive(queue: Queue) -> Message:
    with anyio.fail_after(10):
        while not (messages := await queue.receive(1)):
            pass
    return messages[0]


def test_the_migration_copies_dead_jobs_into_the_history(new_database: Callable[[], str]) -> None:
    url = new_database()
    upgrade(url, f"{HISTORY}-1")
    body = '{"id":"d1","type":"t","payload":{"order_id":"5"}}'
    run_sql(
        url,
        "INSERT INTO jobs (id, type, body, status, attempts, last_error, dead_at)"
        f" VALUES ('d1', 't', '{body}', 'dead', 3, 'E: x', now()),"
        " ('d2', 't', 'not json', 'dead', 1, 'bad', now()),"
        " ('r1', 't', '{}', 'ready', 0, NULL, NULL)",
    )
    upgrade(url, HISTORY)
    rows = run_sql(
        url, "SELECT id, state, args::text, attempts, last_error FROM job_history ORDER BY id"
    )
    assert rows == [("d1", "dead", '{"order_id": "5"}', 3, "E: x"), ("d2", "dead", "{}", 1, "bad")]
    downgrade(url, f"{HISTORY}-1")
    assert run_sql(url, "SELECT count(*) FROM jobs") == [(3,)]


async def test_a_job_keeps_the_request_and_trace_that_enqueued_it(engine: AsyncEngine) -> None:
    history = PostgresJobHistory(engine)
    job = Job(
        new_job("traced").id, "traced", {}, {"traceparent": _TRACEPARENT, "request_id": "r-1"}
    )
    async with PostgresQueue(engine, worker="host-a:1") as queue:
        await enqueue(queue, job)
        live = await history.get(job.id)
        assert live is not None
        assert (live.request_id, live.trace_id) == ("r-1", "4bf92f3577b34da6a3ce929d0e0e4736")
        message = await _receive(queue)
        running = await history.get(job.id)
        assert running is not None
        assert running.state == "running"
        assert running.attempts_log[-1].ended_at is None
        await queue.ack_many([message])
    record = await history.get(job.id)
    assert record is not None
    assert (record.state, record.request_id, record.trace_id) == (
        "done",
        "r-1",
        "4bf92f3577b34da6a3ce929d0e0e4736",
    )
    assert record.attempts_log[0].worker == "host-a:1"


async def test_with_history_off_a_finished_job_leaves_nothing(engine: AsyncEngine) -> None:
    async with PostgresQueue(engine, history=False) as queue:
        await enqueue(queue, new_job("quiet"))
        await queue.ack_many([await _receive(queue)])
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM job_history"))).scalar() == 0


async def test_an_unreadable_body_is_buried_into_the_history(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO jobs (id, type, body) VALUES ('bad', 't', 'nope')"))
    async with PostgresQueue(engine, poll_interval=timedelta(seconds=0.2)) as queue:
        assert await queue.receive(1) == []
    record = await PostgresJobHistory(engine).get("bad")
    assert record is not None
    assert (record.state, dict(record.payload)) == ("dead", {})
    assert record.error is not None


async def test_one_cleaner_at_a_time(engine: AsyncEngine) -> None:
    history = PostgresJobHistory(engine)
    async with PostgresQueue(engine) as queue:
        for _ in range(3):
            await enqueue(queue, new_job("old"))
        await queue.ack_many([await _receive(queue) for _ in range(3)])
    await anyio.sleep(0.2)
    retention = Retention(done=timedelta(milliseconds=100))
    async with engine.connect() as holder:
        await holder.execute(
            text("SELECT pg_advisory_lock(hashtext('skincare.job_history.prune'))")
        )
        assert await history.prune(retention, batch=2) == 0
        await holder.execute(text("SELECT pg_advisory_unlock_all()"))
        await holder.commit()
    assert await history.prune(retention, batch=2) == 3
    assert await history.find(HistoryQuery(job_type="old")) == []


async def test_an_argument_search_walks_the_gin_index(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO job_history (id, type, queue, state, args, finished_at, attempts)"
                " SELECT 'h' || n, 't', 'default', 'done', jsonb_build_object('order_id', n::text),"
                " now() - make_interval(secs => n), 1 FROM generate_series(1, 20000) n"
            )
        )
        await conn.execute(text("ANALYZE job_history"))
        plan = (
            await conn.execute(
                text(
                    "EXPLAIN SELECT id FROM job_history WHERE state = 'done'"
                    """ AND args @> '{"order_id": "77"}' ORDER BY finished_at DESC LIMIT 100"""
                )
            )
        ).all()
    assert "ix_job_history_args" in "\n".join(str(row[0]) for row in plan)
    [found] = await PostgresJobHistory(engine).find(HistoryQuery(args={"order_id": "77"}))
    assert found.id == "h77"


async def _args_index_bytes(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        size = (await conn.execute(text("SELECT pg_relation_size('ix_job_history_args')"))).one()
    return int(size[0])


async def test_the_cleaner_rebuilds_the_argument_index_that_churn_left_large(
    engine: AsyncEngine,
) -> None:
    # Rows with arguments never seen again, pruned and vacuumed: the index keeps their entries.
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO job_history (id, type, queue, state, args, finished_at, attempts)"
                " SELECT 'c' || n, 'churn', 'default', 'done', jsonb_build_object('order_id', n),"
                " now() - interval '1 day', 1 FROM generate_series(1, 30000) n"
            )
        )
    retention = Retention(done=timedelta(hours=1))
    assert await PostgresJobHistory(engine, rebuild_every=None).prune(retention) >= 30_000
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM job_history"))
    churned = await _args_index_bytes(engine)
    history = PostgresJobHistory(engine, rebuild_every=timedelta(0))
    async with engine.connect() as holder:
        await holder.execute(
            text("SELECT pg_advisory_lock(hashtext('skincare.job_history.rebuild'))")
        )
        assert await history.rebuild_index() is False
        await holder.execute(text("SELECT pg_advisory_unlock_all()"))
        await holder.commit()
    # The next prune is due to rebuild (rebuild_every 0): the index is rebuilt from the rows left.
    await history.prune(retention)
    assert await _args_index_bytes(engine) < churned / 2
