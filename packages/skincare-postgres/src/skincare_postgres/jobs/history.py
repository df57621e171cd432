"""The JobHistory port on PostgreSQL: finished jobs in job_history (written by the settles), live
ones read off the jobs table, and the cleaner's prune. Serves the Postgres queue and, with the
ledger's rows (`LEDGER_LIVE_ROWS`), the SQS backend alike."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import LiteralString

import psycopg
from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.history import (
    FINISHED_STATES,
    LIVE_STATES,
    MAX_FOUND,
    PRUNE_BATCH,
    Attempt,
    HistoryQuery,
    JobRecord,
    Retention,
    job_state,
    newest_first,
    payload_text,
    typed_args,
)
from skincare_postgres.driver import Autocommit
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.errors import unavailable_as_error
from skincare_postgres.jobs import history_sql as sql

_ROW = class_row(sql.HistoryRow)

REBUILD_EVERY = timedelta(days=1)
"""How often the cleaner rebuilds the argument index (see `history_sql.REBUILD_ARGS_INDEX`)."""


class PostgresJobHistory:
    """Every job of the jobs table and job_history: live, or finished within its retention.

    `live` says which rows of the jobs table are live jobs and their states (the Postgres
    queue's by default). Each call is one autocommit statement per kind it reads. A job that
    ran more than once (redriven after it died) is one record: its latest run's, with every
    run's attempts. The process that prunes also rebuilds the argument index every
    `rebuild_every` (None: never), concurrently with the writes.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        live: sql.LiveRows = sql.QUEUE_LIVE_ROWS,
        rebuild_every: timedelta | None = REBUILD_EVERY,
    ) -> None:
        self._engine = engine
        self._autocommit = Autocommit(engine)
        self._live = live
        self._rebuild_every = None if rebuild_every is None else rebuild_every.total_seconds()
        self._rebuilt_at = time.monotonic()

    async def find(self, query: HistoryQuery) -> list[JobRecord]:
        """The records `query` matches, newest first."""
        params = _params(query)
        rows: list[sql.HistoryRow] = []
        if query.state is None or query.state in LIVE_STATES:
            rows += await self._read(_live_statement(self._live, query), params)
        if query.state is None or query.state in FINISHED_STATES:
            rows += await self._read(_finished_statement(query), params)
        return newest_first(_merged(rows), query.limit)

    async def get(self, job_id: str) -> JobRecord | None:
        """The job's record; None if it is neither live nor kept."""
        found = await self.find(HistoryQuery(job_id=job_id, limit=MAX_FOUND))
        return found[0] if found else None

    async def prune(self, retention: Retention, *, batch: int = PRUNE_BATCH) -> int:
        """Delete finished jobs past their retention, `batch` rows a statement (done and
        cancelled ones, then dead ones); 0 at once when another process holds the cleaner's
        lock. Past `rebuild_every` since the last, the argument index is rebuilt after."""
        pruned = 0
        for statement, kept in ((sql.PRUNE_DONE, retention.done), (sql.PRUNE_DEAD, retention.dead)):
            while True:
                params = {"kept": kept, "batch": batch}
                [row] = await self._autocommit.rows(statement, params, dict_row)
                if not row["held"]:
                    return pruned
                pruned += int(row["pruned"])
                if int(row["pruned"]) < batch:
                    break
        if self._rebuild_due():
            await self.rebuild_index()
        return pruned

    def _rebuild_due(self) -> bool:
        every = self._rebuild_every
        return every is not None and time.monotonic() - self._rebuilt_at >= every

    async def rebuild_index(self) -> bool:
        """Rebuild the argument index now, concurrently with writes; False when another process
        is rebuilding it. Its own connection: a rebuild outlasts a pooled statement's deadline."""
        self._rebuilt_at = time.monotonic()
        conninfo = libpq_conninfo(self._engine.url)
        with unavailable_as_error():
            async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
                [(held,)] = await (await conn.execute(sql.REBUILD_LOCK)).fetchall()
                if not held:
                    return False
                await conn.execute(sql.DROP_FAILED_REBUILD)
                await conn.execute(sql.REBUILD_ARGS_INDEX)
                await conn.execute(sql.REBUILD_UNLOCK)
        return True

    async def _read(
        self, statement: LiteralString, params: dict[str, object]
    ) -> list[sql.HistoryRow]:
        return await self._autocommit.rows(statement, params, _ROW)


def _params(query: HistoryQuery) -> dict[str, object]:
    return {
        "job_id": query.job_id,
        "job_type": query.job_type,
        "state": query.state,
        "queue": query.queue,
        "since": query.since,
        "until": query.until,
        "args": Jsonb(dict(query.args)),
        "typed_args": Jsonb(typed_args(query.args)),
        "limit": query.limit,
    }


def _given(query: HistoryQuery, filters: Mapping[str, str]) -> list[str]:
    """The filters of the fields `query` gives."""
    values: dict[str, object] = {
        "job_id": query.job_id,
        "job_type": query.job_type,
        "state": query.state,
        "queue": query.queue,
        "since": query.since,
        "until": query.until,
        "args": query.args or None,
    }
    return [fragment for name, fragment in filters.items() if values[name] is not None]


def _live_statement(rows: sql.LiveRows, query: HistoryQuery) -> LiteralString:
    return sql.live_search(
        rows, _given(query, sql.LIVE_FILTERS), _given(query, sql.LIVE_OUTER_FILTERS)
    )


def _finished_statement(query: HistoryQuery) -> LiteralString:
    filters = _given(query, sql.FINISHED_FILTERS)
    if query.state in ("dead", "cancelled"):
        filters.append(sql.FAILED)
    if query.job_id or query.args or query.job_type or query.state in ("dead", "cancelled"):
        return sql.finished_search(filters)
    return sql.finished_by_type(filters)


def _merged(rows: list[sql.HistoryRow]) -> list[JobRecord]:
    """One record per job: its latest run (a live one first, then the latest finished), with
    the attempts of every run, oldest first."""
    runs: dict[str, list[sql.HistoryRow]] = {}
    for row in rows:
        runs.setdefault(row.id, []).append(row)
    return [_record(sorted(found, key=_run_order)) for found in runs.values()]


def _run_order(row: sql.HistoryRow) -> tuple[bool, datetime]:
    # A live run (no finish) is the latest; finished ones by their end.
    return (row.finished_at is None, row.finished_at or datetime.min.replace(tzinfo=UTC))


def _record(runs: list[sql.HistoryRow]) -> JobRecord:
    row = runs[-1]
    return JobRecord(
        id=row.id,
        type=row.type,
        queue=row.queue,
        state=job_state(row.state),
        payload=_strings(row.args),
        enqueued_at=row.enqueued_at,
        due_at=row.due_at,
        finished_at=row.finished_at,
        attempts=row.attempts,
        attempts_log=tuple(attempt for run in runs for attempt in _attempts(run)),
        error=row.last_error,
        request_id=row.request_id,
        trace_id=row.trace_id,
    )


def _attempts(row: sql.HistoryRow) -> tuple[Attempt, ...]:
    """A run's attempts: those logged, then its last (ended with the run, unless running)."""
    logged = tuple(a for e in _entries(row.attempt_log) if (a := _attempt(e)) is not None)
    if row.started_at is None:
        return logged
    error = row.last_error if row.state == "dead" else None
    # The claim does not record its worker: an attempt running now names none.
    last = Attempt(row.started_at, row.finished_at, row.worker or "", error)
    return (*logged, last)


def _entries(log: object) -> list[object]:
    return log if isinstance(log, list) else []


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return payload_text({str(k): v for k, v in value.items()})


def _attempt(entry: object) -> Attempt | None:
    if not isinstance(entry, dict) or not isinstance(start := entry.get("start"), str):
        return None
    end, worker, error = entry.get("end"), entry.get("worker"), entry.get("error")
    return Attempt(
        started_at=datetime.fromisoformat(start),
        ended_at=datetime.fromisoformat(end) if isinstance(end, str) else None,
        worker=worker if isinstance(worker, str) else "",
        error=error if isinstance(error, str) else None,
    )
