"""The Postgres queue's outbox writer: a job row in the caller's transaction, announced after
its commit."""

from __future__ import annotations

from datetime import timedelta

from skincare_core.jobs.envelope import Envelope
from skincare_postgres.driver import Driver
from skincare_postgres.jobs import queue_sql as sql
from skincare_postgres.schema import queue_channel


class PostgresOutboxWriter:
    """The OutboxWriter of a unit of work: with the Postgres queue the outbox row is the queue
    row; with SQS the relay forwards it. `woken` holds the NOTIFY channels of the queues that
    got a job, for the unit of work to wake once its transaction has committed."""

    def __init__(self, driver: Driver, channel: str) -> None:
        self._driver = driver
        self._channel = channel
        self.woken: set[str] = set()

    async def write(self, envelope: Envelope) -> bool:
        """Insert the envelope's job in the open transaction, due after its delay (by the
        database's clock) or at its `not_before`; False (nothing added) if its id is stored
        or a live job holds its unique key.

        A concurrent transaction adding the same key makes this one wait for its outcome.
        """
        params = {
            "id": envelope.job.id,
            "type": envelope.job.type,
            "body": envelope.body,
            "queue": envelope.queue,
            "key": envelope.unique_key,
            "not_before": envelope.not_before,
            "delay": envelope.delay or timedelta(0),
            "priority": envelope.priority,
        }
        added = await self._driver.returned_row(sql.OUTBOX_ADD, params)
        if added:
            self.woken.add(queue_channel(self._channel, envelope.queue))
        return added
