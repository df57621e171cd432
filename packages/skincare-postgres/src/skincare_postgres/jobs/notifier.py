"""Waking idle workers after a commit: one NOTIFY per channel per tick, outside any transaction.

PostgreSQL takes one database-wide lock at the commit of a transaction that notified and holds
it until the commit record is flushed, so transactions that each notify commit one at a time
rather than sharing WAL flushes. The unit of work and the sink hand the
channels they enqueued on to a `PostgresNotifier` once their commit succeeded; it sends them on
an autocommit connection of its own, coalescing whatever commits while a send is in flight or
within one tick after it into the next send.

A notification lost here (the database unreachable, the process killed between commit and send)
costs an idle worker at most its poll interval, never a job: the row is committed and the worker
polls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.engine import engine_timeouts, libpq_conninfo

logger = logging.getLogger(__name__)

DEFAULT_TICK = timedelta(milliseconds=5)
"""How long after a send the next one waits, so that a burst of commits shares it: one send a
tick per process however many commits (each send wakes every listener), at the cost of up to a
tick added to a pickup while commits come faster than that (none when they do not)."""

APPLICATION_NAME = "skincare-notifier"
"""The notifier's connection in pg_stat_activity."""

NOTIFY = "SELECT pg_notify(channel, '') FROM unnest(CAST(%(channels)s AS text[])) AS channel"


class PostgresNotifier:
    """Sends the NOTIFYs committed enqueues ask for; one per process (per engine) is enough.

    `wake` never waits and never fails: the send runs in a task of its own, so the request that
    committed neither waits for it nor can cancel it. The connection opens on the first send and
    closes when the engine is disposed of.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        tick: timedelta = DEFAULT_TICK,
        connect_timeout: timedelta | None = None,
    ) -> None:
        """`connect_timeout`: None, the engine's (`engine_timeouts`)."""
        self._tick = tick.total_seconds()
        connect_timeout, _ = engine_timeouts(engine, connect=connect_timeout)
        self._conn = DedicatedConnection(
            libpq_conninfo(engine.url),
            connect_timeout=connect_timeout,
            settings={"application_name": APPLICATION_NAME, "statement_timeout": "5000"},
            deadline=connect_timeout + timedelta(seconds=5),
        )
        self._pending: set[str] = set()
        self._sender: asyncio.Task[None] | None = None
        self._disposals = 0
        event.listen(engine.sync_engine, "engine_disposed", self._on_dispose)

    def wake(self, channels: Iterable[str]) -> None:
        """NOTIFY each channel soon: at once when idle, else with the next send."""
        self._pending.update(channels)
        if self._pending and self._sender is None:
            # A task of its own (asyncio, which psycopg's async connections already need):
            # no task group outlives a request, and a cancelled request must not cancel it.
            self._sender = asyncio.get_running_loop().create_task(self._send_pending())

    async def idle(self) -> None:
        """Return once every channel asked for so far was notified, or its send failed."""
        while (sender := self._sender) is not None:
            await asyncio.wait([sender])

    async def _send_pending(self) -> None:
        try:
            while self._pending:
                channels, self._pending = sorted(self._pending), set()
                await self._send(channels)
                # Commits during the send and this tick wait for the next one: one NOTIFY per
                # channel per tick however many commits there are.
                await asyncio.sleep(self._tick)
        finally:
            self._sender = None

    async def _send(self, channels: list[str]) -> None:
        disposals = self._disposals
        try:
            # A connection found dead is replaced once at once: a second NOTIFY is harmless.
            await self._conn.run(NOTIFY, {"channels": channels})
        except Exception as error:
            logger.warning("jobs.notify_failed", extra={"channels": channels, "error": str(error)})
        finally:
            if disposals != self._disposals:
                # The engine was disposed of during the send: close what it (re)opened.
                await self._conn.close()

    def _on_dispose(self, engine: Engine) -> None:
        self._disposals += 1
        self._conn.drop()
