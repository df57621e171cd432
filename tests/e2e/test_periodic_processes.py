"""Three real worker processes on one Postgres database, a schedule every second, for 10 s:
each tick is enqueued once, and its job runs once.

The processes race for every tick; the `job_schedules` row lets one claim win. Edges get a
tolerance (the first and last second of the window may fall either side of a process's start
or stop); duplicates get none, anywhere.
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from skincare_postgres.engine import libpq_conninfo
from skincare_services.local import start_process, stop_process, wait_for
from tests.e2e.e2e_client import base_env, log_records
from tests.e2e.ticking_worker import EVERY_SECOND

pytestmark = pytest.mark.slow
WINDOW = 10.0
PROCESSES = 3


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return start_process("tests.e2e.ticking_worker", env, out)


def _started(log: Path) -> bool:
    return any(r.get("message") == "worker.started" for r in log_records(log))


def _ticks_run(database_url: str) -> list[datetime]:
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        return [row[0] for row in conn.execute("SELECT tick FROM tick_runs ORDER BY tick")]


def _ticks_enqueued(logs: list[Path]) -> list[datetime]:
    """The ticks each process's scheduler says it enqueued, from all three logs."""
    return [
        datetime.fromisoformat(str(record["tick"]))
        for log in logs
        for record in log_records(log)
        if record.get("message") == "schedule.enqueued" and record["schedule"] == EVERY_SECOND
    ]


def _run_window(database_url: str, home: Path) -> tuple[datetime, datetime, list[Path]]:
    """Three processes; once all have started, a WINDOW-second run. The window's ends."""
    with psycopg.connect(libpq_conninfo(database_url), autocommit=True) as conn:
        conn.execute("CREATE TABLE tick_runs (tick timestamptz, job_id text, pid int)")
    env, _ = base_env(database_url, home, SKINCARE_WORKER_QUEUES="default=4")
    logs = [home / f"ticking-{n}.log" for n in range(PROCESSES)]
    workers = [_start(env, log) for log in logs]
    try:
        assert wait_for(lambda: all(map(_started, logs)), 60), [p.read_text() for p in logs]
        start = datetime.now(UTC)
        time.sleep(WINDOW)
        end = datetime.now(UTC)
        # The window's last ticks' jobs run before the processes stop.
        time.sleep(2)
    finally:
        codes = [stop_process(worker) for worker in workers]
    assert codes == [0] * PROCESSES, [p.read_text() for p in logs]
    return start, end, logs


def test_three_worker_processes_enqueue_and_run_each_tick_once(
    database_url: str, home: Path
) -> None:
    start, end, logs = _run_window(database_url, home)
    enqueued, ran = Counter(_ticks_enqueued(logs)), Counter(_ticks_run(database_url))
    assert [t for t, n in enqueued.items() if n > 1] == []
    assert [t for t, n in ran.items() if n > 1] == []
    # Every whole second inside the window, one second in from each end, is a tick.
    first = start.replace(microsecond=0) + timedelta(seconds=2)
    inside = [first + timedelta(seconds=n) for n in range(int((end - first).total_seconds()))]
    assert len(inside) >= WINDOW - 3
    assert [t for t in inside if t not in enqueued] == []
    assert [t for t in inside if t not in ran] == []
    # Nothing ran that no process enqueued.
    assert set(ran) <= set(enqueued)
