"""`skincare schedule list` on the real database, and a bad rate limit setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs.schedule import Schedule
from skincare_postgres import PostgresScheduleStore, create_engine
from tests.e2e.e2e_client import base_env

pytestmark = pytest.mark.slow
_DAILY = Schedule("daily-report", "0 7 * * *", "report")


def _skincare(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    quiet = {**os.environ, **env, "SKINCARE_LOG_LEVEL": "WARNING"}
    command = [sys.executable, "-m", "skincare_services.cli.main", *args]
    return subprocess.run(command, env=quiet, capture_output=True, text=True, timeout=60)


async def _begin(url: str) -> None:
    engine = create_engine(url)
    try:
        await PostgresScheduleStore(engine).begin(_DAILY, _DAILY.last_tick(datetime.now(UTC)))
    finally:
        await engine.dispose()


def test_schedule_list_shows_next_and_last_run(database_url: str, home: Path) -> None:
    env, _ = base_env(database_url, home)
    empty = _skincare(env, "schedule", "list")
    assert (empty.returncode, empty.stdout.startswith("no periodic schedules")) == (0, True)
    anyio.run(_begin, database_url)

    listed = _skincare(env, "schedule", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["name"], row["timezone"], row["job_type"]) == (
        "daily-report",
        "Asia/Jakarta",
        "report",
    )
    assert row["next_run"].endswith("T07:00:00+07:00")
    assert datetime.fromisoformat(row["next_run"]) > datetime.fromisoformat(row["last_run"])

    table = _skincare(env, "schedule", "list").stdout.splitlines()
    assert table[0].split() == ["NAME", "CRON", "TIMEZONE", "JOB_TYPE", "NEXT_RUN", "LAST_RUN"]
    assert table[1].startswith("daily-report  0 7 * * *")


def test_a_bad_rate_limit_is_one_line_and_exit_2(database_url: str, home: Path) -> None:
    env, _ = base_env(database_url, home, SKINCARE_RATE_LIMITS="default=fast")
    result = _skincare(env, "schedule", "list")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "skincare: SKINCARE_RATE_LIMITS: expected queue=jobs-per-second pairs like"
        " default=14,bulk=2, got 'default=fast'"
    ]
