"""Rate limits' one-second windows, in a table every worker process shares."""

from __future__ import annotations

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import rate_limits_sql as sql


class PostgresRateLimiter:
    """The RateLimiter on job_rate_windows: one-second windows by the database's clock, shared
    by every worker process on the database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._autocommit = Autocommit(engine)
        self._known: set[str] = set()

    async def acquire(self, key: str, wanted: int, per_second: int) -> int:
        """Up to `wanted` of the current second's `per_second` starts under `key`."""
        if key not in self._known:
            await self._autocommit.run(sql.RATE_WINDOW_ADD, {"key": key})
            self._known.add(key)
        params = {"key": key, "wanted": wanted, "limit": per_second}
        rows = await self._autocommit.rows(sql.RATE_ACQUIRE, params, dict_row)
        if not rows:
            # The window row was deleted (a truncate): add it again on the next call.
            self._known.discard(key)
            return 0
        return int(rows[0]["granted"])
