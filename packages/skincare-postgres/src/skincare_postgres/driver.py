"""Plain psycopg beneath a unit of work's SQLAlchemy connection: how the repositories run SQL.

SQLAlchemy's async layer costs about 0.25 ms of Python per statement (greenlet hop, compiled
cache lookup, result wrapping), and checkout and the cart run five statements per request on
a two-core machine shared with the database. The statements run on the same psycopg
connection, so they are in the unit of work's transaction and its commit or rollback.
"""

from __future__ import annotations

from typing import Any, LiteralString, cast

import psycopg
from sqlalchemy.ext.asyncio import AsyncConnection

Params = dict[str, Any]


class Driver:
    """Runs SQL (psycopg `%(name)s` placeholders) on the connection under `conn`."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn
        self._driver: psycopg.AsyncConnection[tuple[Any, ...]] | None = None

    async def rows(self, sql: LiteralString, params: Params) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        cursor = await (await self._connection()).execute(sql, params)
        return await cursor.fetchall()

    async def run(self, sql: LiteralString, params: Params) -> None:
        """Run a statement that returns nothing the caller needs."""
        await (await self._connection()).execute(sql, params)

    async def _connection(self) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        if self._driver is None:
            proxied = await self._conn.get_raw_connection()
            self._driver = cast(psycopg.AsyncConnection[tuple[Any, ...]], proxied.driver_connection)
        return self._driver
