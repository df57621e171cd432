"""The schedules migration keeps every stored job; going back drops only its own tables."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skincare_postgres import downgrade, upgrade
from tests.postgres.statements import run_sql

SCHEDULES = "0005"
"""The revision that added job_schedules and job_rate_windows."""

_JOB = "INSERT INTO jobs (id, type, body) VALUES ('j1', 'ping', '{}')"
_SCHEDULE = (
    "INSERT INTO job_schedules (name, cron, timezone, job_type, last_tick)"
    " VALUES ('daily', '0 7 * * *', 'Asia/Jakarta', 'ping', now())"
)
_TABLES = (
    "SELECT table_name FROM information_schema.tables"
    " WHERE table_name IN ('job_schedules', 'job_rate_windows') ORDER BY 1"
)


@pytest.mark.slow
def test_jobs_survive_both_ways_and_the_tables_come_and_go(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{SCHEDULES}-1")
    run_sql(url, _JOB)
    upgrade(url, SCHEDULES)
    run_sql(url, _SCHEDULE)
    assert run_sql(url, _TABLES) == [("job_rate_windows",), ("job_schedules",)]
    downgrade(url, f"{SCHEDULES}-1")
    assert run_sql(url, _TABLES) == []
    upgrade(url, SCHEDULES)
    assert run_sql(url, "SELECT id FROM jobs") == [("j1",)]
