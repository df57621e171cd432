"""Plain psycopg on the engine's pooled connections: the unit of work's and the one-off path.

SQLAlchemy's async layer adds Python work to every statement (a greenlet hop, a compiled cache
lookup, result wrapping), which the checkout and the cart would pay several times a request. So
SQLAlchemy lends the pooled connection (and its transaction, for a unit of work) and the
statements run on the psycopg connection under it.

Each statement runs under the engine's client-side deadline (`client_deadline`): a cancelled
psycopg statement closes its connection, which the unit of work or `_discard_if_broken` then
takes out of the pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import LiteralString, TypeVar, cast

import anyio
import psycopg
from psycopg.rows import AsyncRowFactory, TupleRow, tuple_row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from skincare_postgres.engine import client_deadline, libpq_conninfo
from skincare_postgres.errors import DatabaseUnavailable, is_unavailable, unavailable_as_error
from skincare_postgres.execution import Params, Row, fetch

T = TypeVar("T")


class Driver:
    """Runs SQL in the transaction of the unit of work's connection `conn`."""

    def __init__(self, conn: AsyncConnection, *, deadline: float | None = None) -> None:
        self._conn = conn
        self._deadline = deadline
        self._driver: psycopg.AsyncConnection[TupleRow] | None = None

    async def rows(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row]
    ) -> list[Row]:
        """Every row the statement returns, built by `row` from the column names."""
        if self._driver is None:
            self._driver = await psycopg_connection(self._conn)
        with anyio.fail_after(self._deadline):
            return await fetch(self._driver, sql, params, row)

    async def returned_row(self, sql: LiteralString, params: Params) -> bool:
        """Whether the statement (`... RETURNING 1`, `SELECT 1 ...`) returned a row."""
        return bool(await self.rows(sql, params, tuple_row))

    async def run(self, sql: LiteralString, params: Params) -> None:
        """Run a statement that returns nothing the caller needs."""
        await self.rows(sql, params, tuple_row)


class Autocommit:
    """One statement per pooled connection, committed on its own and durably."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._deadline = client_deadline(engine)

    async def rows(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row]
    ) -> list[Row]:
        """Every row the statement returns, built by `row`; DatabaseUnavailable when down."""
        return await self._rows(sql, params, row, [])

    async def run(self, sql: LiteralString, params: Params) -> None:
        """Run a statement that returns nothing the caller needs."""
        await self.rows(sql, params, tuple_row)

    async def idempotent_rows(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row]
    ) -> list[Row]:
        """`rows` for a statement that may run twice: when the pooled connection it got was
        dead (killed, or the server restarted since), it runs once more on a new connection
        of its own (the pool may hold more dead ones)."""
        lost: list[bool] = []
        try:
            return await self._rows(sql, params, row, lost)
        except DatabaseUnavailable:
            if not any(lost):
                raise
        conninfo = libpq_conninfo(self._engine.url)
        with unavailable_as_error(), anyio.fail_after(self._deadline):
            async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
                return await fetch(conn, sql, params, row)

    async def _rows(
        self, sql: LiteralString, params: Params, row: AsyncRowFactory[Row], lost: list[bool]
    ) -> list[Row]:
        # The deadline covers the pool's checkout and the connect too, then the statement.
        with unavailable_as_error(), anyio.fail_after(self._deadline):
            conn = await self._engine.connect()
            try:
                return await fetch(await psycopg_connection(conn), sql, params, row)
            except BaseException as error:
                # Connected, then failed: the pool handed out a connection that had died.
                lost.append(is_unavailable(error))
                await _discard_if_broken(conn, error)
                raise
            finally:
                # Shielded: a cancelled caller (a relay stopped mid-statement) must still hand
                # the connection back, or it stays checked out until the garbage collector.
                # No I/O: an autocommit connection has no transaction to roll back.
                with anyio.CancelScope(shield=True):
                    await conn.close()


async def in_transaction(
    engine: AsyncEngine, work: Callable[[psycopg.AsyncConnection[TupleRow]], Awaitable[T]]
) -> T:
    """Run `work` in one transaction on a pooled connection of `engine` (not an autocommit
    one), committed when it returns: what it returned; DatabaseUnavailable when down."""
    with unavailable_as_error(), anyio.fail_after(client_deadline(engine)):
        conn = await engine.connect()
        try:
            async with conn.begin():
                return await work(await psycopg_connection(conn))
        except BaseException as error:
            await _discard_if_broken(conn, error)
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()


async def psycopg_connection(conn: AsyncConnection) -> psycopg.AsyncConnection[TupleRow]:
    """The psycopg connection under a SQLAlchemy one."""
    proxied = await conn.get_raw_connection()
    return cast(psycopg.AsyncConnection[TupleRow], proxied.driver_connection)


async def _discard_if_broken(conn: AsyncConnection, error: BaseException) -> None:
    # SQLAlchemy did not run the statement, so it cannot tell a lost or cancelled connection
    # from a good one: invalidate it here, or the pool would hand it out again.
    if is_unavailable(error) or not isinstance(error, Exception):
        with anyio.CancelScope(shield=True):
            await conn.invalidate()
