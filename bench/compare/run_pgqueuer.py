"""pgqueuer on psycopg 3 (our driver) or asyncpg (its first driver, when installed).

One connection enqueues, each worker has its own. With psycopg, pgqueuer's NOTIFY watcher holds
the connection lock while it waits (psycopg's notifies()), so its queries queue behind it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import psycopg
from pgqueuer import AsyncpgDriver, PsycopgDriver, Queries, QueueManager
from pgqueuer.models import Job

from bench.compare.systems import Handler, Payload

ENTRYPOINT = "noop"


class PgqueuerSystem:
    """pgqueuer's own enqueue (one multi-row INSERT per batch) and its QueueManager."""

    def __init__(self, url: str, driver: str, connection: Any) -> None:
        self._url = url
        self._driver = driver
        self._queries = Queries(_driver(driver, connection))

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
        async with _connect(self._driver, self._url) as conn:
            manager = QueueManager(Queries(_driver(self._driver, conn)))

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
        count: Any = rows[0]["n"]
        return int(count)


def asyncpg_installed() -> bool:
    """Whether the asyncpg variant can run (asyncpg is not in the bench group)."""
    return importlib.util.find_spec("asyncpg") is not None


@asynccontextmanager
async def open_system(url: str, options: Mapping[str, Any]) -> AsyncIterator[PgqueuerSystem]:
    """pgqueuer on `url`; option driver: "psycopg" (default) or "asyncpg"."""
    driver = str(options.get("driver", "psycopg"))
    async with _connect(driver, url) as conn:
        yield PgqueuerSystem(url, driver, conn)


@asynccontextmanager
async def _connect(driver: str, url: str) -> AsyncIterator[Any]:
    if driver == "asyncpg":
        import asyncpg  # type: ignore[import-not-found]

        conn = await asyncpg.connect(url)
        try:
            yield conn
        finally:
            await conn.close()
        return
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        yield conn


def _driver(driver: str, connection: Any) -> AsyncpgDriver | PsycopgDriver:
    return AsyncpgDriver(connection) if driver == "asyncpg" else PsycopgDriver(connection)
