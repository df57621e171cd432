"""examples/warehouse, another team's service, end to end as real processes on the embedded
PostgreSQL: its FastAPI app changes stock and enqueues `sync_warehouse_stock` in the same
session; its worker serves the team's definition. A change that fails to commit takes its job
with it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from skincare_postgres.engine import libpq_conninfo
from skincare_services.local import free_port, start_process, stop_process, wait_for
from tests.e2e.e2e_client import base_env
from tests.e2e.ops_page import ops_row

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).parents[2] / "examples" / "warehouse"


@contextmanager
def warehouse_app(env: dict[str, str], home: Path) -> Iterator[httpx.Client]:
    """`uvicorn warehouse_app:app` from the example's directory, ready to serve."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "warehouse_app:app", "--port", str(port)]
    with (home / "warehouse_app.log").open("ab") as log:
        app = subprocess.Popen(
            command, cwd=EXAMPLE, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            assert wait_for(lambda: _answers(client), 30), (home / "warehouse_app.log").read_text()
            yield client
    finally:
        # uvicorn re-raises the SIGTERM it drained on.
        assert stop_process(app) in (0, -signal.SIGTERM)


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/openapi.json").status_code == 200
    except httpx.TransportError:
        return False


def _jobs_of(database_url: str) -> int:
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        row = conn.execute("SELECT count(*) FROM jobs WHERE type = 'sync_warehouse_stock'")
        [count] = row.fetchone() or (0,)
    return int(count)


def test_a_stock_change_reaches_the_warehouse_and_a_failed_one_leaves_no_job(
    database_url: str, home: Path
) -> None:
    synced = home / "warehouse"
    synced.mkdir()
    env, _ = base_env(
        database_url,
        home,
        WAREHOUSE_DATABASE_URL=database_url,
        WAREHOUSE_SYNC_DIR=str(synced),
        PYTHONPATH=os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")])),
    )
    with (home / "warehouse_worker.log").open("ab") as log:
        worker = start_process("warehouse_worker", env, log)
    try:
        with warehouse_app(env, home) as client:
            assert client.put("/stock/42", json={"quantity": 7}).status_code == 204
            record = synced / "42.json"
            assert wait_for(record.exists, 30), (home / "warehouse_worker.log").read_text()
            refused = client.put("/stock/43", json={"quantity": -1})
    finally:
        assert stop_process(worker) == 0
    assert json.loads(record.read_text()) == {"product_id": 42}
    assert refused.status_code == 422
    assert _jobs_of(database_url) == 0
    assert not (synced / "43.json").exists()
    # The tutorial's last step: the job is counted on the ops page and in `skincare queue stats`.
    assert ops_row(env, "bulk") == {
        **dict.fromkeys(("ready", "scheduled", "leased", "dead", "failed"), "0"),
        "done": "1",
    }
    stats = subprocess.run(
        [sys.executable, "-m", "skincare_services.cli.main", "queue", "stats", "--queue", "bulk"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    shown = _tutorial_stats_output().splitlines()
    assert [line.rstrip() for line in stats.stdout.splitlines()] == shown


def _tutorial_stats_output() -> str:
    """What the tutorial shows `skincare queue stats --queue bulk` printing."""
    page = (EXAMPLE.parents[1] / "docs" / "guides" / "for-teams.md").read_text()
    shown: str
    [shown] = re.findall(r"skincare queue stats --queue bulk\n```\n\n```text\n(.*?)```", page, re.S)
    return shown


def test_the_teams_own_tests_run_its_job_through_the_drain(tmp_path: Path) -> None:
    # As the team runs its suite: its pytest, skincare's job_drain fixture loaded by pytest.
    # Its own --basetemp: a pytest that starts on the default one makes /tmp/pytest-of-<user>
    # private again, which shuts the embedded servers of this run out of their data directories.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "--basetemp", str(tmp_path / "team")],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
