"""Periodic schedules' rules and last ticks, in a table every scheduler process shares."""

from __future__ import annotations

from datetime import datetime, timedelta

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.ports import ScheduleRecord
from skincare_core.jobs.schedule import Schedule
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import schedules_sql as sql
from skincare_postgres.schema import JOBS_CHANNEL


class PostgresScheduleStore:
    """The ScheduleStore on job_schedules: a tick's record and its job commit together."""

    def __init__(self, engine: AsyncEngine, *, channel: str = JOBS_CHANNEL) -> None:
        self._autocommit = Autocommit(engine)
        self._channel = channel

    async def begin(self, schedule: Schedule, tick: datetime) -> None:
        """Store the rule; record `tick` as the last run unless the schedule has one."""
        params = {
            "name": schedule.name,
            "cron": schedule.cron,
            "timezone": schedule.timezone,
            "job_type": schedule.job_type,
            "tick": tick,
        }
        await self._autocommit.run(sql.SCHEDULE_BEGIN, params)

    async def claim(self, schedule: str, tick: datetime, envelope: Envelope) -> bool:
        """Move the last run to `tick` and insert the job, in one statement, if `tick` is later."""
        job = envelope.job
        params = {
            "name": schedule,
            "tick": tick,
            "id": job.id,
            "type": job.type,
            "body": envelope.body,
            "queue": envelope.queue,
            "key": envelope.unique_key,
            "not_before": envelope.not_before,
            "delay": envelope.delay or timedelta(0),
            "channel": self._channel,
        }
        [row] = await self._autocommit.rows(sql.SCHEDULE_CLAIM, params, dict_row)
        return bool(row["claimed"])

    async def records(self) -> list[ScheduleRecord]:
        """Every stored schedule, by name."""
        rows = await self._autocommit.rows(sql.SCHEDULE_RECORDS, {}, dict_row)
        return [
            ScheduleRecord(
                name=str(row["name"]),
                cron=str(row["cron"]),
                timezone=str(row["timezone"]),
                job_type=str(row["job_type"]),
                last_tick=_datetime(row["last_tick"]),
            )
            for row in rows
        ]


def _datetime(value: object) -> datetime:
    if not isinstance(value, datetime):
        raise TypeError(f"expected a timestamp, got {value!r}")
    return value
