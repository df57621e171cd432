"""The transactional outbox: a job row in the caller's transaction, announced after commit."""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import evolve

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.envelope import check_schedule, check_unique_key
from skincare_core.jobs.job import Job
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.jobs.tracing import HeaderSource
from skincare_postgres.driver import Driver
from skincare_postgres.jobs import queue_sql as sql
from skincare_postgres.schema import queue_channel


class PostgresOutbox:
    """With the Postgres queue the outbox row is the queue row; with SQS the relay forwards it."""

    def __init__(
        self,
        driver: Driver,
        routes: QueueRoutes,
        channel: str,
        job_headers: HeaderSource | None = None,
    ) -> None:
        self._driver = driver
        # The channels to NOTIFY once the transaction commits (the unit of work sends them).
        self.woken: set[str] = set()
        self._routes = routes
        self._channel = channel
        self._job_headers = job_headers

    async def add(
        self,
        job: Job,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
    ) -> bool:
        """Queue `job` on its routed queue if, and only if, this transaction commits; False
        (nothing added) if a live job holds `unique_key`. JobTooLarge and ValueError at once.

        A concurrent transaction adding the same key makes this one wait for its outcome.
        """
        if self._job_headers is not None and (headers := self._job_headers()):
            job = evolve(job, headers={**headers, **job.headers})
        body = encode_job(job)
        check_schedule(delay, not_before)
        check_unique_key(unique_key)
        queue = self._routes.queue_of(job.type)
        channel = queue_channel(self._channel, queue)
        params = {
            "id": job.id,
            "type": job.type,
            "body": body,
            "queue": queue,
            "key": unique_key,
            "not_before": not_before,
            "delay": delay or timedelta(0),
        }
        added = await self._driver.returned_row(sql.OUTBOX_ADD, params)
        if added:
            self.woken.add(channel)
        return added
