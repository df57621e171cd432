"""A dedicated psycopg connection, opened on first use and reopened after it breaks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import LiteralString, TypeVar

import anyio
import psycopg
from psycopg.rows import AsyncRowFactory, TupleRow, tuple_row

from skincare_postgres.errors import DatabaseUnavailable, is_unavailable, unavailable_as_error
from skincare_postgres.execution import Params, Row, fetch

Setup = Callable[[psycopg.AsyncConnection[TupleRow]], Awaitable[None]]
T = TypeVar("T")


class DedicatedConnection:
    """One autocommit connection outside the engine's pool, for the queue's hot path."""

    def __init__(
        self,
        conninfo: str,
        *,
        connect_timeout: timedelta,
        settings: dict[str, str],
        setup: Setup | None = None,
        deadline: timedelta | None = None,
    ) -> None:
        self._conninfo = conninfo
        # The server's statement_timeout never fires for a statement it never received (a
        # stalled network): the client gives up after `deadline` and reconnects.
        self._deadline = None if deadline is None else deadline.total_seconds()
        self._timeout = max(1, round(connect_timeout.total_seconds()))
        self._options = " ".join(f"-c {name}={value}" for name, value in settings.items())
        self._setup = setup
        self._conn: psycopg.AsyncConnection[TupleRow] | None = None
        self._lock = anyio.Lock()

    async def get(self) -> psycopg.AsyncConnection[TupleRow]:
        """The open connection, connecting (and running `setup`) if there is none."""
        # The lock only guards connecting: a statement on an open connection takes no yield.
        if self._conn is not None and not self._conn.closed:
            return self._conn
        async with self._lock:
            if self._conn is None or self._conn.closed:
                with unavailable_as_error():
                    self._conn = await self._connect()
            return self._conn

    async def rows(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row]
    ) -> list[Row]:
        """Run one autocommit statement; the rows it returned, built by `row` ([] for none).

        When a connection that worked before is found dead (a restart, pg_terminate_backend),
        the statement runs once more at once on a new one; a second failure is raised.
        Every statement run here may run twice: claims, acks and lease changes are at least once.
        """
        reused = self._conn is not None and not self._conn.closed
        try:
            return await self._once(sql, params, row)
        except DatabaseUnavailable:
            if not reused:
                raise
        return await self._once(sql, params, row)

    async def _once(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row]
    ) -> list[Row]:
        conn = await self.get()
        try:
            with unavailable_as_error(), anyio.fail_after(self._deadline):
                return await fetch(conn, sql, params, row)
        except BaseException:
            # A failed or cancelled statement may leave the connection mid-protocol.
            await self.close()
            raise

    async def transaction(
        self, work: Callable[[psycopg.AsyncConnection[TupleRow]], Awaitable[T]]
    ) -> T:
        """Run `work` in one transaction on the connection, once: what it returned. A failure
        closes the connection, as a failed statement does (the transaction rolls back)."""
        conn = await self.get()
        try:
            with unavailable_as_error(), anyio.fail_after(self._deadline):
                async with conn.transaction():
                    return await work(conn)
        except BaseException:
            await self.close()
            raise

    async def run(self, sql: LiteralString, params: Params) -> None:
        """Run one autocommit statement whose rows, if any, the caller does not need."""
        await self.rows(sql, params, tuple_row)

    async def close(self) -> None:
        """Close the connection; the next use opens a new one."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await conn.close()
            except Exception as error:
                if not is_unavailable(error):
                    raise

    def drop(self) -> None:
        """Close the connection at once, for a synchronous caller (an engine's dispose hook)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            # What AsyncConnection.close() does, without the await a sync hook cannot make.
            conn.pgconn.finish()

    async def _connect(self) -> psycopg.AsyncConnection[TupleRow]:
        conn = await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, connect_timeout=self._timeout, options=self._options
        )
        try:
            if self._setup is not None:
                await self._setup(conn)
        except BaseException:
            await conn.close()
            raise
        return conn
