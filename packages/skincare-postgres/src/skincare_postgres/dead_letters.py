"""Dead jobs in the jobs table (status 'dead'): count, list, get, redrive, purge."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter
from skincare_postgres.errors import unavailable_as_error

_COUNT = text("SELECT count(*) FROM jobs WHERE status = 'dead'")
_LIST = text(
    "SELECT id, type, body, attempts, last_error, dead_at FROM jobs WHERE status = 'dead' "
    "AND (CAST(:type AS text) IS NULL OR type = :type) ORDER BY dead_at, id LIMIT :limit"
)
_GET = text(
    "SELECT id, type, body, attempts, last_error, dead_at FROM jobs "
    "WHERE status = 'dead' AND id = :id"
)
# Redriven jobs start over: attempts 0, visible now, and idle workers are woken.
_REDRIVE = text(
    "WITH moved AS (UPDATE jobs SET status = 'ready', attempts = 0, available_at = now(), "
    "dead_at = NULL, receipt = NULL, lease_expires_at = NULL "
    "WHERE status = 'dead' AND (CAST(:id AS text) IS NULL OR id = :id) "
    "AND (CAST(:type AS text) IS NULL OR type = :type) RETURNING 1) "
    "SELECT (SELECT count(*) FROM moved), pg_notify(:channel, '')"
)
_PURGE = text(
    "WITH gone AS (DELETE FROM jobs WHERE status = 'dead' RETURNING 1) SELECT count(*) FROM gone"
)


class PostgresDeadLetters:
    """The DeadLetters port over the jobs table; every call is one autocommit statement."""

    def __init__(self, engine: AsyncEngine, channel: str) -> None:
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._channel = channel

    async def count(self) -> int:
        """How many jobs are dead."""
        return int(await self._scalar(_COUNT, {}))

    async def list(self, *, job_type: str | None = None, limit: int = 100) -> list[DeadLetter]:
        """Dead jobs, oldest first, optionally of one type."""
        with unavailable_as_error():
            async with self._engine.connect() as conn:
                rows = await conn.execute(_LIST, {"type": job_type, "limit": limit})
                return [
                    DeadLetter(_job_of(r), r.attempts, r.last_error or "", r.dead_at) for r in rows
                ]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id; None if no job of that id is dead."""
        with unavailable_as_error():
            async with self._engine.connect() as conn:
                r = (await conn.execute(_GET, {"id": job_id})).one_or_none()
        if r is None:
            return None
        return DeadLetter(_job_of(r), r.attempts, r.last_error or "", r.dead_at)

    async def redrive(self, job_id: str) -> bool:
        """Send one dead job back with attempts reset; False if no such dead job."""
        return await self._redrive(job_id=job_id, job_type=None) == 1

    async def redrive_all(self, *, job_type: str | None = None) -> int:
        """Send every dead job (of one type) back; returns how many."""
        return await self._redrive(job_id=None, job_type=job_type)

    async def purge(self) -> int:
        """Delete every dead job; returns how many."""
        return int(await self._scalar(_PURGE, {}))

    async def _redrive(self, *, job_id: str | None, job_type: str | None) -> int:
        params = {"id": job_id, "type": job_type, "channel": self._channel}
        return int(await self._scalar(_REDRIVE, params))

    async def _scalar(self, statement: Any, params: dict[str, Any]) -> Any:
        with unavailable_as_error():
            async with self._engine.connect() as conn:
                return (await conn.execute(statement, params)).scalar_one()


def _job_of(row: Any) -> Job:
    # A body that no longer decodes was buried for that reason: show its id and type.
    try:
        return decode_job(row.body)
    except InvalidJob:
        return Job(row.id, row.type)
