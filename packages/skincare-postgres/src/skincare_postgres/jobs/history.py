"""The JobHistory port on PostgreSQL: finished jobs in job_history (written by the settles), live
ones read off the jobs table, and the cleaner's prune. Serves the Postgres queue and, with the
ledger's rows (`LEDGER_LIVE_ROWS`), the SQS backend alike."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import LiteralString

from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.history import (
    FINISHED_STATES,
    LIVE_STATES,
    PRUNE_BATCH,
    Attempt,
    HistoryQuery,
    JobRecord,
    JobState,
    Retention,
    newest_first,
)
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import history_sql as sql

_ROW = class_row(sql.HistoryRow)


class PostgresJobHistory:
    """Every job of the jobs table and job_history: live, or finished within its retention.

    `live` says which rows of the jobs table are live jobs and their states (the Postgres
    queue's by default). Each call is one autocommit statement per kind it reads.
    """

    def __init__(self, engine: AsyncEngine, *, live: sql.LiveRows = sql.QUEUE_LIVE_ROWS) -> None:
        self._autocommit = Autocommit(engine)
        self._live = live

    async def find(self, query: HistoryQuery) -> list[JobRecord]:
        """The records `query` matches, newest first; a job live again after it finished (a
        redriven dead job) is found once, live."""
        params = _params(query)
        found: list[JobRecord] = []
        if query.state is None or query.state in LIVE_STATES:
            found += await self._read(_live_statement(self._live, query), params)
        if query.state is None or query.state in FINISHED_STATES:
            live = {record.id for record in found}
            finished = await self._read(_finished_statement(query), params)
            found += [record for record in finished if record.id not in live]
        return newest_first(found, query.limit)

    async def get(self, job_id: str) -> JobRecord | None:
        """The job's record; None if it is neither live nor kept."""
        found = await self.find(HistoryQuery(job_id=job_id, limit=1))
        return found[0] if found else None

    async def prune(self, retention: Retention, *, batch: int = PRUNE_BATCH) -> int:
        """Delete finished jobs past their retention, `batch` rows a statement, oldest state by
        state; 0 at once when another process holds the cleaner's lock."""
        pruned = 0
        for state in FINISHED_STATES:
            while True:
                params = {"state": state, "kept": retention.kept_for(state), "batch": batch}
                [row] = await self._autocommit.rows(sql.PRUNE, params, dict_row)
                if not row["held"]:
                    return pruned
                pruned += int(row["pruned"])
                if int(row["pruned"]) < batch:
                    break
        return pruned

    async def _read(self, statement: LiteralString, params: dict[str, object]) -> list[JobRecord]:
        rows = await self._autocommit.rows(statement, params, _ROW)
        return [_record(row) for row in rows]


def _params(query: HistoryQuery) -> dict[str, object]:
    return {
        "job_id": query.job_id,
        "job_type": query.job_type,
        "state": query.state,
        "queue": query.queue,
        "since": query.since,
        "until": query.until,
        "args": Jsonb(dict(query.args)),
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
    if query.state is not None:
        return sql.finished_search("state = %(state)s", filters)
    # One branch per state, each on its (state, finished_at) index, merged.
    branches = [sql.finished_search(f"state = '{state}'", filters) for state in FINISHED_STATES]
    return sql.union_newest(branches)


def _record(row: sql.HistoryRow) -> JobRecord:
    attempts = _attempts(row.attempt_log)
    if row.running_since is not None:
        # The claim does not record its worker: the attempt running now names none.
        attempts += (Attempt(row.running_since, None, ""),)
    return JobRecord(
        id=row.id,
        type=row.type,
        queue=row.queue,
        state=_state(row.state),
        payload=_strings(row.args),
        enqueued_at=row.enqueued_at,
        due_at=row.due_at,
        finished_at=row.finished_at,
        attempts=row.attempts,
        attempts_log=attempts,
        error=row.last_error,
        request_id=row.request_id,
        trace_id=row.trace_id,
    )


def _state(value: str) -> JobState:
    for state in (*LIVE_STATES, *FINISHED_STATES):
        if state == value:
            return state
    raise ValueError(f"unknown job state {value!r} in the database")


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v if isinstance(v, str) else str(v) for k, v in value.items()}


def _attempts(log: object) -> tuple[Attempt, ...]:
    if not isinstance(log, list):
        return ()
    return tuple(attempt for entry in log if (attempt := _attempt(entry)) is not None)


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
