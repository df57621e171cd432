"""A queue backend from a package of its own (tests/e2e/toy_backend, entry point `toy`) runs the
real `skincare-worker` through SKINCARE_QUEUE alone: nothing in services names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skincare_services.local import free_port, start_process, stop_process, wait_for
from tests.e2e.e2e_client import base_env, log_records
from tests.e2e.metrics_scrape import sample, scrape

pytestmark = pytest.mark.slow
TOY_PACKAGE = Path(__file__).parent / "toy_backend"


def _toy_env(database_url: str, home: Path, queue: str) -> dict[str, str]:
    """The worker's environment with the toy package importable, as if installed."""
    pythonpath = os.pathsep.join(
        p for p in (str(TOY_PACKAGE), os.environ.get("PYTHONPATH", "")) if p
    )
    env, _ = base_env(
        database_url,
        home,
        SKINCARE_QUEUE=queue,
        SKINCARE_WORKER_QUEUES="default=1",
        PYTHONPATH=pythonpath,
    )
    return env


def _events(log: Path) -> list[str]:
    return [str(record["message"]) for record in log_records(log)]


def test_the_worker_serves_a_backend_registered_by_another_package(
    database_url: str, home: Path
) -> None:
    log, port = home / "worker.log", free_port()
    env = {**_toy_env(database_url, home, "toy"), "SKINCARE_METRICS_PORT": str(port)}
    with log.open("ab") as out:
        worker = start_process("skincare_services.worker", env, out)
    try:
        assert wait_for(lambda: "job.dead_lettered" in _events(log), 30), log.read_text()
        # The queue's depth comes from the backend's own stats.
        samples = scrape(f"http://127.0.0.1:{port}/metrics")
        assert sample(samples, "skincare_queue_jobs", queue="default", state="dead") == 1
    finally:
        code = stop_process(worker)
    assert code == 0, log.read_text()
    records = {str(r["message"]): r for r in log_records(log)}
    assert records["worker.started"]["queue"] == "toy"
    assert records["job.dead_lettered"]["type"] == "toy.greeting"
    assert records["toy_backend.closed"]["dead_letters"] == 1
    assert "worker.stopped" in records


def test_an_unknown_backend_stops_start_up_naming_the_registered_ones(
    database_url: str, home: Path
) -> None:
    env = {**os.environ, **_toy_env(database_url, home, "redis")}
    done = subprocess.run(
        [sys.executable, "-m", "skincare_services.worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "skincare: SKINCARE_QUEUE: expected one of postgres, sqs, toy, got 'redis'"
    ]
