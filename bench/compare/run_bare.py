"""The practical limit: a bare psycopg loop on our jobs table, with no engine around it.

One connection with the settings of our claim connection (`synchronous_commit=off`, and the
planner settings that keep the claim on its index): claim a batch with our claim statement
(`FOR UPDATE SKIP LOCKED`), decode each body and call the handler with its payload (the least
any job runner does), delete the batch, repeat. Nothing overlaps."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import anyio
import psycopg

from bench.compare.run_ours import OursSystem
from bench.compare.run_ours import open_system as open_ours
from bench.compare.systems import Handler, Payload
from skincare_core.jobs import DEFAULT_QUEUE
from skincare_postgres import jobs_sql

_DELETE = "DELETE FROM jobs WHERE id = ANY(%(ids)s)"
_IDLE_PAUSE = 0.001
# The settings of PostgresQueue's claim connection.
_OPTIONS = "-c synchronous_commit=off -c plan_cache_mode=force_custom_plan -c enable_sort=off"


class BareSystem:
    """Our schema and enqueue (so both drain the same rows); the worker is the bare loop."""

    def __init__(self, url: str, ours: OursSystem) -> None:
        self._url = url
        self._ours = ours

    async def install(self) -> None:
        """Our Alembic migrations."""
        await self._ours.install()

    async def enqueue(self, payloads: Sequence[Payload]) -> None:
        """PostgresQueue.enqueue_many, as ours."""
        await self._ours.enqueue(payloads)

    @asynccontextmanager
    async def work(self, handler: Handler, *, batch: int, concurrency: int) -> AsyncIterator[None]:
        """The loop on its own connection until the context closes (`concurrency` is unused)."""
        conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True, options=_OPTIONS)
        stop = anyio.Event()
        # Stopped between batches, not cancelled: a cancelled query would close the connection.
        async with conn, anyio.create_task_group() as tg:
            tg.start_soon(_loop, conn, handler, batch, stop)
            try:
                yield
            finally:
                stop.set()

    async def remaining(self) -> int:
        """Rows left in the jobs table that are not dead."""
        return await self._ours.remaining()


async def _loop(
    conn: psycopg.AsyncConnection[Any], handler: Handler, batch: int, stop: anyio.Event
) -> None:
    params = {
        "visibility": timedelta(seconds=30),
        "limit": batch,
        "queue": DEFAULT_QUEUE,
        **jobs_sql.floor_params({}),
    }
    while not stop.is_set():
        rows = await (await conn.execute(jobs_sql.CLAIM, params)).fetchall()
        if not rows:
            await anyio.sleep(_IDLE_PAUSE)
            continue
        for row in rows:
            await handler(json.loads(row[1])["payload"])
        await conn.execute(_DELETE, {"ids": [row[0] for row in rows]})


@asynccontextmanager
async def open_system(url: str, options: Mapping[str, Any]) -> AsyncIterator[BareSystem]:
    """The bare loop on `url` (no options)."""
    async with open_ours(url, {}) as ours:
        yield BareSystem(url, ours)
