"""The transactional outbox: a job row in the caller's transaction, announced on commit."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_core.codec import encode_job
from skincare_core.jobs import Job

# NOTIFY inside a transaction is delivered only when it commits, like the row itself.
_INSERT_AND_NOTIFY = text(
    "WITH added AS (INSERT INTO jobs (id, type, body) VALUES (:id, :type, :body) RETURNING 1) "
    "SELECT pg_notify(:channel, '') FROM added"
)


class PostgresOutbox:
    """With the Postgres queue the outbox row is the queue row; with SQS the relay forwards it."""

    def __init__(self, conn: AsyncConnection, channel: str) -> None:
        self._conn = conn
        self._channel = channel

    async def add(self, job: Job) -> None:
        """Queue `job` if, and only if, this transaction commits; JobTooLarge at once."""
        body = encode_job(job)
        params = {"id": job.id, "type": job.type, "body": body, "channel": self._channel}
        await self._conn.execute(_INSERT_AND_NOTIFY, params)
