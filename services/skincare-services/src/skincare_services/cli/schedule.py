"""`skincare schedule list [--json]`: every periodic schedule, its next and last run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from cyclopts import App

from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import CliError
from skincare_services.cli.options import Json
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend
    from skincare_core.jobs.ports import ScheduleRecord

_COLUMNS = ("name", "cron", "timezone", "job_type", "next_run", "last_run")


def register(app: App) -> None:
    """Add `schedule` and its commands to the `skincare` app."""
    schedule = App(name="schedule", help="Look at periodic jobs.")
    schedule.command(list_schedules, name="list")
    app.command(schedule)


def list_schedules(*, as_json: Json = False) -> int:
    """List every periodic schedule the workers run: its rule, next run and last run, in the
    schedule's time zone. A schedule is listed once a worker that declares it has started.

    Parameters
    ----------
    as_json
        Print one JSON array for scripts instead of a table for people.
    """
    records = run_on_backend(_records)
    rows = [_row(record, datetime.now(UTC)) for record in records]
    if as_json:
        print(json.dumps(rows))
    else:
        _print_table(rows)
    return 0


async def _records(backend: Backend) -> Sequence[ScheduleRecord]:
    if backend.schedules is None:
        raise CliError("this queue backend keeps no periodic schedules")
    return await backend.schedules.records()


def _row(record: ScheduleRecord, now: datetime) -> dict[str, str]:
    from skincare_core.jobs.schedule import Schedule

    schedule = Schedule(record.name, record.cron, record.job_type, timezone=record.timezone)
    zone = ZoneInfo(record.timezone)
    return {
        "name": record.name,
        "cron": record.cron,
        "timezone": record.timezone,
        "job_type": record.job_type,
        "next_run": schedule.next_tick(now).astimezone(zone).isoformat(),
        "last_run": record.last_tick.astimezone(zone).isoformat(),
    }


def _print_table(rows: list[dict[str, str]]) -> None:
    if not rows:
        say("no periodic schedules yet (a worker records its schedules when it starts)")
        return
    widths = {c: max(len(c), *(len(row[c]) for row in rows)) for c in _COLUMNS}
    say("  ".join(c.upper().ljust(widths[c]) for c in _COLUMNS).rstrip())
    for row in rows:
        say("  ".join(row[c].ljust(widths[c]) for c in _COLUMNS).rstrip())
