"""A job row in a caller's own transaction: the unit of work's outbox writer, and
`enqueue_in_transaction` for a team's SQLAlchemy or psycopg transaction.

With the Postgres queue the row is the queue row; with SQS it is the outbox row the relay sends
once it has committed. Either way it commits or rolls back with the caller's transaction.
"""

from __future__ import annotations

from datetime import timedelta

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from skincare_core.jobs.envelope import Envelope, refuse_priorities
from skincare_postgres.driver import Driver
from skincare_postgres.errors import unavailable_as_error
from skincare_postgres.execution import fetch
from skincare_postgres.jobs import queue_sql as sql
from skincare_postgres.schema import JOBS_CHANNEL, queue_channel

TransactionConnection = AsyncConnection | AsyncSession | psycopg.AsyncConnection[object]
"""What `enqueue_in_transaction` writes in: a SQLAlchemy connection or session on the psycopg
driver (`postgresql+psycopg://`), or a psycopg connection."""


class PostgresOutboxWriter:
    """The OutboxWriter of a unit of work: with the Postgres queue the outbox row is the queue
    row; with SQS the relay forwards it. `woken` holds the NOTIFY channels of the queues that
    got a job, for the unit of work to wake once its transaction has committed. Where the
    queues cannot order jobs by priority (`ordered` False: SQS), a job with a priority other
    than the default is PriorityUnsupported before anything is written."""

    def __init__(self, driver: Driver, channel: str, *, ordered: bool = True) -> None:
        self._driver = driver
        self._channel = channel
        self._ordered = ordered
        self.woken: set[str] = set()

    async def write(self, envelope: Envelope) -> bool:
        """Insert the envelope's job in the open transaction, due after its delay (by the
        database's clock) or at its `not_before`; False (nothing added) if its id is stored
        or a live job holds its unique key.

        A concurrent transaction adding the same key makes this one wait for its outcome.
        """
        if not self._ordered:
            refuse_priorities([envelope])
        added = await self._driver.returned_row(sql.OUTBOX_ADD, _row(envelope))
        if added:
            self.woken.add(queue_channel(self._channel, envelope.queue))
        return added


async def enqueue_in_transaction(
    conn: TransactionConnection,
    envelope: Envelope,
    *,
    notify: bool = True,
    channel: str = JOBS_CHANNEL,
    ordered: bool = True,
) -> bool:
    """Write `envelope`'s job in the transaction open on `conn`: it is queued if, and only if,
    the caller commits. False (nothing written) if its id is stored or a live job, or one
    written earlier in this transaction, holds its unique key.

    A SQLAlchemy connection or session without a transaction begins one (as its own statements
    would); the caller commits it. A psycopg connection in autocommit mode must be inside
    `conn.transaction()`, or this is a ValueError: the row would commit on its own.

    `notify`: the NOTIFY that wakes the queue's idle workers rides in the same transaction, so
    PostgreSQL sends it when the caller commits and drops it on a rollback; a worker picks the
    job up within milliseconds of the commit. The price is PostgreSQL's notify lock, which
    makes notifying commits take turns; with `notify=False` the commit skips it and an idle
    worker finds the job within its poll interval (1 s by default). On SQS the relay sends the
    row within its idle wait (0.2 s) after the commit: pass `notify=False` there, and
    `ordered=False`: an SQS queue has no order among its messages, so a job with a priority
    other than the default is PriorityUnsupported before anything is written.
    """
    if not ordered:
        refuse_priorities([envelope])
    driver = await _transaction_of(conn)
    params = _row(envelope)
    statement = sql.OUTBOX_ADD
    if notify:
        params["channel"] = queue_channel(channel, envelope.queue)
        statement = sql.OUTBOX_ADD_NOTIFY
    with unavailable_as_error():
        return bool(await fetch(driver, statement, params, tuple_row))


async def _transaction_of(conn: TransactionConnection) -> psycopg.AsyncConnection[object]:
    # The psycopg connection under the caller's, inside the caller's transaction.
    if isinstance(conn, AsyncSession):
        conn = await conn.connection()  # begins the session's transaction if none is open
    if isinstance(conn, AsyncConnection):
        if not conn.in_transaction():
            await conn.begin()
        raw = (await conn.get_raw_connection()).driver_connection
        if not isinstance(raw, psycopg.AsyncConnection):
            raise TypeError("enqueue_in_transaction needs the psycopg driver (postgresql+psycopg)")
        conn = raw
    if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
        raise ValueError(
            "enqueue_in_transaction needs an open transaction: this connection autocommits"
        )
    return conn


def _row(envelope: Envelope) -> dict[str, object]:
    return {
        "id": envelope.job.id,
        "type": envelope.job.type,
        "body": envelope.body,
        "queue": envelope.queue,
        "key": envelope.unique_key,
        "not_before": envelope.not_before,
        "delay": envelope.delay or timedelta(0),
        "priority": envelope.priority,
    }
