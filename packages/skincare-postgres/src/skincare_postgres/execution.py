"""How every statement of this package runs: psycopg, `%(name)s` placeholders, rows by name.

Three places hand out the psycopg connection a statement runs on: the unit of work's `Driver`
(inside its transaction), the queue's `DedicatedConnection`s (the hot path, autocommit, outside
the pool) and `Autocommit` (one pooled connection per statement: enqueues, dead letters, ping).
SQLAlchemy is not on this path: it owns the pool (`engine.py`), the unit of work's transaction
(`shop/unit_of_work.py`), the tables' metadata (`schema.py`) and the migrations (`alembic/`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import LiteralString, TypeVar

import psycopg
from psycopg.rows import AsyncRowFactory

Params = Mapping[str, object]
Row = TypeVar("Row")


async def fetch(
    conn: psycopg.AsyncConnection[object],
    sql: LiteralString,
    params: Params,
    row: AsyncRowFactory[Row],
) -> list[Row]:
    """Run one statement; its rows as `row` builds them from the column names ([] for none)."""
    cursor = conn.cursor(row_factory=row)
    await cursor.execute(sql, params)
    return await cursor.fetchall() if cursor.description else []
