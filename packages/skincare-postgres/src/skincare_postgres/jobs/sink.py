"""Enqueueing into the jobs table outside a business transaction: one durable statement a batch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.envelope import Envelope, check_schedule
from skincare_core.jobs.job import Job
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import queue_sql as sql
from skincare_postgres.jobs.notifier import PostgresNotifier
from skincare_postgres.schema import JOBS_CHANNEL, queue_channel


class PostgresSink:
    """The JobSink of the Postgres queue: each envelope to its named queue, its workers woken
    after the commit by `notifier` (None: one of its own)."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        channel: str = JOBS_CHANNEL,
        notifier: PostgresNotifier | None = None,
    ) -> None:
        self._autocommit = Autocommit(engine)
        self._channel = channel
        self._notifier = PostgresNotifier(engine) if notifier is None else notifier

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Enqueue every envelope in one statement; how many were added (a job id already
        stored, or a unique key a live job holds, adds nothing). JobTooLarge before any I/O."""
        return await self._insert(envelopes, timedelta(0))

    async def enqueue(
        self,
        job: Job,
        *,
        queue: str,
        delay: timedelta | None,
        not_before: datetime | None,
        unique_key: str | None,
    ) -> bool:
        """One job on `queue`, due after `delay` (by the database's clock) or at `not_before`."""
        check_schedule(delay, not_before)
        envelope = Envelope(job, queue, not_before, unique_key)
        return await self._insert([envelope], delay or timedelta(0)) == 1

    async def _insert(self, envelopes: Sequence[Envelope], delay: timedelta) -> int:
        bodies = [encode_job(envelope.job) for envelope in envelopes]
        if not envelopes:
            return 0
        params = {
            "ids": [e.job.id for e in envelopes],
            "types": [e.job.type for e in envelopes],
            "bodies": bodies,
            "queues": [e.queue for e in envelopes],
            "keys": [e.unique_key for e in envelopes],
            "not_befores": [e.not_before for e in envelopes],
            "delay": delay,
        }
        # Client-made ids and ON CONFLICT DO NOTHING make a second run add nothing twice.
        [row] = await self._autocommit.idempotent_rows(sql.ENQUEUE, params, dict_row)
        self._notifier.wake(queue_channel(self._channel, queue) for queue in row["queues"])
        return int(row["added"])
