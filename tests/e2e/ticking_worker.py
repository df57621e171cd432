"""A team's worker with a periodic job every second, for the three-process schedule test: the
shop's worker plus `record_tick` and its schedule, registered from outside the packages.

Run as `python -m tests.e2e.ticking_worker` with the `skincare-worker` environment; each run of
the job adds a row (its tick, job id and this process's id) to the `tick_runs` table, which the
test creates. The table has no unique key, so a tick that ran twice shows twice.
"""

from __future__ import annotations

import functools
import os

import anyio
import psycopg

from skincare_core.jobs import Job, Schedules
from skincare_postgres.engine import libpq_conninfo
from skincare_services.startup import settings_or_exit
from skincare_services.worker import run_worker

RECORD_TICK = "record_tick"
EVERY_SECOND = "every-second"
_INSERT = "INSERT INTO tick_runs (tick, job_id, pid) VALUES (%s, %s, %s)"


class RecordTick:
    """Adds a `tick_runs` row per run (the handler a team would make idempotent; this one
    deliberately is not, so the test sees every run)."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo

    async def __call__(self, job: Job) -> None:
        async with await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True) as conn:
            await conn.execute(_INSERT, (job.payload["tick"], job.id, os.getpid()))


def main() -> None:
    """Serve `record_tick` beside the shop's types and enqueue it every second, until SIGTERM."""
    settings = settings_or_exit("worker")
    schedules = Schedules()
    schedules.add(EVERY_SECOND, "* * * * * *", RECORD_TICK)
    handlers = {RECORD_TICK: RecordTick(libpq_conninfo(settings.database_url))}
    anyio.run(functools.partial(run_worker, settings, handlers=handlers, schedules=schedules))


if __name__ == "__main__":
    main()
