"""The Postgres queue in the backend shape, and the outbox storage a relay to another queue reads.

Both take an engine they do not own (the caller disposes of it) and close the connections they
open themselves on exit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import OutboxStorage
from skincare_postgres.queue import PostgresQueue
from skincare_postgres.stats import PostgresQueueStats


@asynccontextmanager
async def postgres_backend(
    engine: AsyncEngine,
    *,
    visibility_timeout: timedelta = timedelta(seconds=30),
    poll_interval: timedelta = timedelta(seconds=1),
) -> AsyncIterator[Backend]:
    """The jobs table as queue, dead letters, sink and stats.

    No relay runs: the unit of work's outbox row is the queue row, so `outbox` is None.
    """
    async with PostgresQueue(
        engine, visibility_timeout=visibility_timeout, poll_interval=poll_interval
    ) as queue:
        stats = PostgresQueueStats(engine)
        yield Backend(queue=queue, dead_letters=queue, sink=queue, outbox=None, stats=stats)


@asynccontextmanager
async def postgres_outbox_storage(engine: AsyncEngine) -> AsyncIterator[OutboxStorage]:
    """The committed outbox rows, for a relay that forwards them to another queue (SQS)."""
    async with PostgresQueue(engine) as storage:
        yield storage
