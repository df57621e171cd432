"""The workers' per-minute counts of each job type in job_minutes (`MinuteStore`): each process
adds to rows of its own slot, and prunes rows older than two hours now and then."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.minutes import BUCKETS, TypeMinute
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs.outcomes import PruneSchedule

# Each process adds to a row of its own (one of 64) per queue, type and minute, as job_outcomes.
_SLOT = "mod(pg_backend_pid(), 64)"

ADD = f"""
INSERT INTO job_minutes AS m (queue, type, minute, slot, done, retried, failed, durations, pickups)
VALUES (%(queue)s, %(type)s, %(minute)s, {_SLOT}, %(done)s, %(retried)s, %(failed)s,
    %(durations)s, %(pickups)s)
ON CONFLICT (queue, type, minute, slot) DO UPDATE SET
    done = m.done + EXCLUDED.done, retried = m.retried + EXCLUDED.retried,
    failed = m.failed + EXCLUDED.failed,
    durations = ARRAY(SELECT a + b FROM unnest(m.durations, EXCLUDED.durations) AS t(a, b)),
    pickups = ARRAY(SELECT a + b FROM unnest(m.pickups, EXCLUDED.pickups) AS t(a, b))
"""


def _summed(column: str) -> str:
    # No built-in sums arrays element by element: one sum per bucket, in bucket order.
    sums = ", ".join(f"sum({column}[{n}])" for n in range(1, BUCKETS + 1))
    return f"ARRAY[{sums}]::bigint[] AS {column}"


# The slots (processes) of each queue, type and minute summed in the database: the page reads
# one row per queue, type and minute whatever the number of worker processes.
SINCE = f"""
SELECT queue, type, minute, sum(done)::bigint AS done, sum(retried)::bigint AS retried,
    sum(failed)::bigint AS failed,
    {_summed("durations")}, {_summed("pickups")}
FROM job_minutes WHERE minute >= %(start)s GROUP BY queue, type, minute
"""

PRUNE = "DELETE FROM job_minutes WHERE minute < now() - %(kept)s"
_KEPT = timedelta(hours=2)


class PostgresMinuteStore:
    """The MinuteStore port over job_minutes; every statement autocommits."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._autocommit = Autocommit(engine)
        self._prune = PruneSchedule()

    async def add(self, rows: Sequence[TypeMinute]) -> None:
        """Add each row's counts to its minute's row of this connection's slot."""
        for row in rows:
            params = {
                "queue": row.queue,
                "type": row.job_type,
                "minute": row.minute,
                "done": row.done,
                "retried": row.retried,
                "failed": row.failed,
                "durations": list(row.durations),
                "pickups": list(row.pickups),
            }
            await self._autocommit.run(ADD, params)
        if self._prune.due():
            await self._autocommit.run(PRUNE, {"kept": _KEPT})

    async def since(self, start: datetime) -> list[TypeMinute]:
        """Every minute from `start` on, the slots summed."""
        found = await self._autocommit.rows(SINCE, {"start": start}, dict_row)
        return [
            TypeMinute(
                r["queue"],
                r["type"],
                r["minute"],
                int(r["done"]),
                int(r["retried"]),
                int(r["failed"]),
                tuple(int(n) for n in r["durations"]),
                tuple(int(n) for n in r["pickups"]),
            )
            for r in found
        ]
