"""Pauses in the job_pauses table, and the actions on one job of the jobs table: the operator's
levers (`skincare_core.jobs.steering`) on Postgres. The SQS backend keeps its pauses here too."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from psycopg.rows import class_row, tuple_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.steering import JobState, JobView, Paused, one_target
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import queue_sql
from skincare_postgres.jobs import steering_sql as sql
from skincare_postgres.jobs.row_bodies import decode_row_body
from skincare_postgres.schema import JOBS_CHANNEL


class PostgresPauses:
    """The Pauses port over job_pauses: a pause is a row, so it holds for every process and
    through restarts. Each call is one autocommit statement."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._autocommit = Autocommit(engine)

    async def pause(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Pause the queue or the type; whether it was not paused before."""
        kind, name = one_target(queue, job_type)
        params = {"kind": kind, "name": name}
        return bool(await self._autocommit.rows(sql.PAUSE, params, tuple_row))

    async def resume(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Resume the queue or the type; whether it was paused."""
        kind, name = one_target(queue, job_type)
        params = {"kind": kind, "name": name}
        return bool(await self._autocommit.rows(sql.RESUME, params, tuple_row))

    async def paused(self) -> Paused:
        """Every paused queue and type."""
        rows = await self._autocommit.rows(sql.PAUSED, {}, tuple_row)
        queues = {str(name) for kind, name in rows if kind == "queue"}
        return Paused(queues, {str(name) for kind, name in rows if kind == "type"})


class _Found(NamedTuple):
    id: str
    body: str
    queue: str
    attempts: int
    due_at: datetime
    state: str


class PostgresJobActions:
    """The JobActions port over the Postgres queue's jobs table, every named queue; with
    `history` a cancelled job's timeline is kept (job_history), as the queue's cancel keeps it."""

    def __init__(
        self, engine: AsyncEngine, channel: str = JOBS_CHANNEL, *, history: bool = True
    ) -> None:
        self._autocommit = Autocommit(engine)
        self._channel = channel
        self._history = history

    async def find(self, job_id: str) -> JobView | None:
        """The job's row as it stands; None when there is none (or its body is no job)."""
        rows = await self._autocommit.rows(sql.FIND, {"id": job_id}, class_row(_Found))
        if not rows:
            return None
        row = rows[0]
        try:
            job = decode_row_body(row.id, row.body)
        except InvalidJob:
            return None
        due = None if row.state == "dead" else row.due_at
        return JobView(job, row.queue, _state(row.state), row.attempts, due)

    async def run_now(self, job_id: str) -> bool:
        """Make a scheduled or retrying job due now and wake its queue's workers."""
        params = {"id": job_id, "channel": self._channel}
        return bool(await self._autocommit.rows(sql.RUN_NOW, params, tuple_row))

    async def cancel(self, job_id: str) -> bool:
        """Delete the job if it waits (not running), as its queue's cancel does; whether it
        did."""
        view = await self.find(job_id)
        if view is None or not view.can_cancel:
            return False
        statement = queue_sql.CANCEL_KEEPING if self._history else queue_sql.CANCEL
        params = {"id": job_id, "queue": view.queue}
        return bool(await self._autocommit.rows(statement, params, tuple_row))


def _state(value: str) -> JobState:
    for state in ("ready", "scheduled", "retrying", "running", "dead"):
        if value == state:
            return state
    raise ValueError(f"unknown job state {value!r}")
