"""The transactional outbox: a job row in the caller's transaction, announced on commit."""

from __future__ import annotations

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.job import Job
from skincare_postgres import jobs_sql as sql
from skincare_postgres.driver import Driver


class PostgresOutbox:
    """With the Postgres queue the outbox row is the queue row; with SQS the relay forwards it."""

    def __init__(self, driver: Driver, channel: str) -> None:
        self._driver = driver
        self._channel = channel

    async def add(self, job: Job) -> None:
        """Queue `job` if, and only if, this transaction commits; JobTooLarge at once."""
        body = encode_job(job)
        params = {"id": job.id, "type": job.type, "body": body, "channel": self._channel}
        await self._driver.run(sql.OUTBOX_ADD, params)
