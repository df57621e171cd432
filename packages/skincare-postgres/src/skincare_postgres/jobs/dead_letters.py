"""Dead jobs in the jobs table (status 'dead'): count, list, get, redrive, purge."""

from __future__ import annotations

from datetime import datetime

from psycopg.rows import dict_row, kwargs_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import dead_letters_sql as sql
from skincare_postgres.jobs.row_bodies import decode_row_body
from skincare_postgres.schema import JOBS_CHANNEL


class PostgresDeadLetters:
    """The DeadLetters port over the jobs table, every named queue; every call is one
    autocommit statement."""

    def __init__(self, engine: AsyncEngine, channel: str = JOBS_CHANNEL) -> None:
        self._autocommit = Autocommit(engine)
        self._channel = channel

    async def count(self, *, queue: str | None = None) -> int:
        """How many jobs are dead (in one queue)."""
        [row] = await self._autocommit.rows(sql.DEAD_COUNT, {"queue": queue}, dict_row)
        return int(row["dead"])

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> list[DeadLetter]:
        """Dead jobs, oldest first, optionally of one type and of one queue."""
        params = {"type": job_type, "queue": queue, "limit": limit}
        return await self._autocommit.rows(sql.DEAD_LIST, params, _DEAD_LETTER)

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id; None if no job of that id is dead."""
        found = await self._autocommit.rows(sql.DEAD_GET, {"id": job_id}, _DEAD_LETTER)
        return found[0] if found else None

    async def redrive(self, job_id: str) -> bool:
        """Send one dead job back to its queue, attempts reset; False if no such dead job."""
        return await self._redrive(job_id=job_id, job_type=None, queue=None) == 1

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Send every dead job (of one type, of one queue) back; returns how many."""
        return await self._redrive(job_id=None, job_type=job_type, queue=queue)

    async def purge(self) -> int:
        """Delete every dead job; returns how many."""
        [row] = await self._autocommit.rows(sql.PURGE, {}, dict_row)
        return int(row["purged"])

    async def _redrive(self, *, job_id: str | None, job_type: str | None, queue: str | None) -> int:
        params = {"id": job_id, "type": job_type, "queue": queue, "channel": self._channel}
        [row] = await self._autocommit.rows(sql.REDRIVE, params, dict_row)
        return int(row["moved"])


def _dead_letter(
    *,
    job_id: str,
    job_type: str,
    body: str,
    attempts: int,
    last_error: str | None,
    dead_at: datetime,
    queue: str,
) -> DeadLetter:
    return DeadLetter(
        job=_job_of(job_id, job_type, body),
        attempts=attempts,
        error=last_error or "",
        dead_at=dead_at,
        queue=queue,
    )


def _job_of(job_id: str, job_type: str, body: str) -> Job:
    # A body that does not decode, or names another job, was buried for that reason: show the
    # row's id and type.
    try:
        return decode_row_body(job_id, body)
    except InvalidJob:
        return Job(id=job_id, type=job_type)


_DEAD_LETTER = kwargs_row(_dead_letter)
