"""pgqueuer on psycopg 3 (the same driver as ours): one connection to enqueue, one per worker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import psycopg
from pgqueuer import PsycopgDriver, Queries, QueueManager
from pgqueuer.models import Job

from bench.compare.systems import Handler, Payload

ENTRYPOINT = "noop"


class PgqueuerSystem:
    """pgqueuer's own enqueue (one multi-row INSERT per batch) and its QueueManager."""

    def __init__(self, url: str, connection: psycopg.AsyncConnection[Any]) -> None:
        self._url = url
        self._queries = Queries(PsycopgDriver(connection))

    async def install(self) -> None:
        """`pgq install`: tables, enum, trigger for NOTIFY."""
        await self._queries.install()

    async def enqueue(self, payloads: Sequence[Payload]) -> None:
        """One INSERT of every job (autocommit: one commit)."""
        count = len(payloads)
        data: list[bytes | None] = [json.dumps(p).encode() for p in payloads]
        await self._queries.enqueue([ENTRYPOINT] * count, data, [0] * count)

    @asynccontextmanager
    async def work(self, handler: Handler, *, batch: int, concurrency: int) -> AsyncIterator[None]:
        """A QueueManager on its own connection, batch_size=batch, max_concurrent_tasks."""
        async with await psycopg.AsyncConnection.connect(self._url, autocommit=True) as conn:
            manager = QueueManager(Queries(PsycopgDriver(conn)))

            @manager.entrypoint(ENTRYPOINT)
            async def noop(job: Job) -> None:
                await handler(json.loads(job.payload or b"{}"))

            task = asyncio.create_task(
                manager.run(
                    batch_size=batch,
                    max_concurrent_tasks=concurrency,
                    dequeue_timeout=timedelta(seconds=5),
                )
            )
            try:
                yield
            finally:
                manager.shutdown.set()
                await task

    async def remaining(self) -> int:
        """Rows still in the queue table (done jobs move to pgqueuer_log)."""
        rows = await self._queries.driver.fetch("SELECT count(*) AS n FROM pgqueuer")
        return int(rows[0]["n"])  # type: ignore[call-overload]


@asynccontextmanager
async def open_system(url: str, options: Mapping[str, Any]) -> AsyncIterator[PgqueuerSystem]:
    """pgqueuer on the database at `url`; it has no options here."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        yield PgqueuerSystem(url, conn)
