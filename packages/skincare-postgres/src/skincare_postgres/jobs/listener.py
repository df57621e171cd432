"""Waiting for a job notification on a LISTENing connection, with a timeout."""

from __future__ import annotations

from datetime import timedelta

import anyio
import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.errors import is_unavailable

CHECK_EVERY = timedelta(seconds=5)
"""How long a LISTEN connection may stay quiet before a SELECT 1 checks that it still answers."""


class JobListener:
    """One LISTEN connection per queue; concurrent waiters share whatever wakes the reader.

    A connection that only reads never notices a peer that stopped answering (a stalled network,
    a hung server): it would wait for notifications that never come, and idle workers would
    fall back to their poll. So once it has been quiet for `check_every`, a `SELECT 1` must
    answer within the connect timeout, or the connection is dropped, the waiters claim at once,
    and the next wait listens on a new one.
    """

    def __init__(
        self,
        conninfo: str,
        channel: str,
        *,
        connect_timeout: timedelta,
        check_every: timedelta = CHECK_EVERY,
    ) -> None:
        self._channel = channel
        self._conn = DedicatedConnection(
            conninfo, connect_timeout=connect_timeout, settings={}, setup=self._listen
        )
        self._check_every = check_every.total_seconds()
        self._check_within = connect_timeout.total_seconds()
        self._heard = 0.0  # checked at the first quiet read
        self._reading = False
        self._woken = anyio.Event()

    async def start(self) -> None:
        """LISTEN now, so a job enqueued from here on is noticed."""
        await self._conn.get()

    async def wait(self, seconds: float) -> None:
        """Return on a notification (or one already received) or after `seconds`."""
        if self._reading:
            with anyio.move_on_after(seconds):
                await self._woken.wait()
            return
        self._reading, self._woken = True, anyio.Event()
        try:
            await self._read(seconds)
        finally:
            self._reading = False
            self._woken.set()

    async def close(self) -> None:
        """Close the listening connection."""
        await self._conn.close()

    async def _read(self, seconds: float) -> None:
        conn = await self._conn.get()
        try:
            received = [n async for n in conn.notifies(timeout=seconds, stop_after=1)]
            if received or anyio.current_time() - self._heard >= self._check_every:
                await self._heard_from(conn, bool(received))
            # Drain the backlog piled up while busy: one wake-up covers them all.
            while received:
                received = [n async for n in conn.notifies(timeout=0)]
        except TimeoutError:
            # The check went unanswered: a silent peer. Waiters claim now, as below.
            await self._conn.close()
        except Exception as error:
            await self._conn.close()
            if not is_unavailable(error):
                raise
            # A lost LISTEN connection may have missed notifications: wake the waiters so they
            # claim now; the next wait listens again on a new connection.
        except BaseException:
            await self._conn.close()
            raise

    async def _heard_from(self, conn: psycopg.AsyncConnection[TupleRow], heard: bool) -> None:
        if not heard:
            with anyio.fail_after(self._check_within):
                await conn.execute("SELECT 1")
        self._heard = anyio.current_time()

    async def _listen(self, conn: psycopg.AsyncConnection[TupleRow]) -> None:
        await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
