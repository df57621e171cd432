"""The Postgres queue's depth by state, in one statement over the jobs table."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.ports import QueueCounts
from skincare_postgres.errors import unavailable_as_error

# A lease sets a receipt and pushes available_at forward; a retry clears the receipt. A ready row
# whose available_at has passed is ready (an expired lease too); a later one is leased if it
# holds a receipt, else scheduled.
_STATS = text(
    """
    SELECT
        count(*) FILTER (WHERE status = 'ready' AND available_at <= now()) AS ready,
        count(*) FILTER (WHERE status = 'ready' AND available_at > now() AND receipt IS NULL)
            AS scheduled,
        count(*) FILTER (WHERE status = 'ready' AND available_at > now() AND receipt IS NOT NULL)
            AS leased,
        count(*) FILTER (WHERE status = 'dead') AS dead,
        EXTRACT(EPOCH FROM now() - min(available_at)
            FILTER (WHERE status = 'ready' AND available_at <= now()))::float8 AS oldest_ready
    FROM jobs
    WHERE CAST(:queue AS text) IS NULL OR queue = :queue
    """
)


class PostgresQueueStats:
    """The QueueStats port over the jobs table: one autocommit read, no locks taken. With
    `queue`, only that named queue's jobs count; without, every queue's."""

    def __init__(self, engine: AsyncEngine, *, queue: str | None = None) -> None:
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._queue = queue

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """Ready, scheduled, leased and dead jobs, and the oldest ready job's wait (of the
        named `queue` if given, else of the one this view was made for)."""
        chosen = self._queue if queue is None else queue
        with unavailable_as_error():
            async with self._engine.connect() as conn:
                row = (await conn.execute(_STATS, {"queue": chosen})).one()
        oldest = None if row.oldest_ready is None else timedelta(seconds=row.oldest_ready)
        return QueueCounts(row.ready, row.scheduled, row.leased, row.dead, oldest)
