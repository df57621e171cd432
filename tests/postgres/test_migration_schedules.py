"""The schedules migration keeps every stored job; going back drops only its own tables."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import create_engine, text

from skincare_postgres import downgrade, upgrade

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


def _run(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run the statements in one transaction; the last one's rows."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            results = [conn.execute(text(sql)) for sql in statements]
            return [tuple(row) for row in results[-1]] if results[-1].returns_rows else []
    finally:
        engine.dispose()


@pytest.mark.slow
def test_jobs_survive_both_ways_and_the_tables_come_and_go(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{SCHEDULES}-1")
    _run(url, _JOB)
    upgrade(url, SCHEDULES)
    _run(url, _SCHEDULE)
    assert _run(url, _TABLES) == [("job_rate_windows",), ("job_schedules",)]
    downgrade(url, f"{SCHEDULES}-1")
    assert _run(url, _TABLES) == []
    upgrade(url, SCHEDULES)
    assert _run(url, "SELECT id FROM jobs") == [("j1",)]
