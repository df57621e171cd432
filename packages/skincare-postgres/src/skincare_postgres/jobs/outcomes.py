"""The JobOutcomes port over job_outcomes (written by the settles, `outcomes_sql.py`), and when
a writer prunes the minutes nobody reads any more."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import timedelta

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.outcomes import KEPT, RECENT, OutcomeCounts
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import outcomes_sql as sql

# Pruning is a writer's chore, not a reader's: a few statements an hour per process keep the
# table at about an hour of minutes per queue (sixty rows each), whatever the job rate.
_PRUNE_EVERY = 600.0


class PostgresJobOutcomes:
    """Jobs done and failed per named queue, from the Postgres queue's settles or the SQS
    backend's ledger alike: one autocommit read."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._autocommit = Autocommit(engine)

    async def recent(self, window: timedelta = RECENT) -> Mapping[str, OutcomeCounts]:
        """Per named queue, the jobs finished in the minutes that started within `window`."""
        return await read_recent(self._autocommit, window)


async def read_recent(autocommit: Autocommit, window: timedelta) -> Mapping[str, OutcomeCounts]:
    """The jobs each named queue finished in the minutes that started within `window` (at
    most `KEPT`), read on `autocommit`."""
    rows = await autocommit.rows(sql.RECENT, {"window": min(window, KEPT)}, dict_row)
    return {row["queue"]: OutcomeCounts(int(row["done"]), int(row["failed"])) for row in rows}


class PruneSchedule:
    """Whether a writer should prune old minutes now: at its first settle, then every ten
    minutes."""

    def __init__(self) -> None:
        self._last: float | None = None

    def due(self) -> bool:
        """True (and the clock restarts) when the last prune is ten minutes old or never was."""
        now = time.monotonic()
        if self._last is not None and now - self._last < _PRUNE_EVERY:
            return False
        self._last = now
        return True


PRUNE_PARAMS = {"kept": KEPT}
