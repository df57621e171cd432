"""Enqueueing into the jobs table outside a business transaction: one durable statement a batch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
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
        """Enqueue every envelope in one statement, each due after its delay (by the database's
        clock) or at its `not_before`; how many were added (a job id already stored, or a
        unique key a live job holds, adds nothing)."""
        if not envelopes:
            return 0
        params = {
            "ids": [e.job.id for e in envelopes],
            "types": [e.job.type for e in envelopes],
            "bodies": [e.body for e in envelopes],
            "queues": [e.queue for e in envelopes],
            "keys": [e.unique_key for e in envelopes],
            "not_befores": [e.not_before for e in envelopes],
            "delays": [e.delay or _NOW for e in envelopes],
            "priorities": [e.priority for e in envelopes],
        }
        # Client-made ids and ON CONFLICT DO NOTHING make a second run add nothing twice.
        [row] = await self._autocommit.idempotent_rows(sql.ENQUEUE, params, dict_row)
        self._notifier.wake(queue_channel(self._channel, queue) for queue in row["queues"])
        return int(row["added"])


_NOW = timedelta(0)
