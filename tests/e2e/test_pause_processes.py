"""Pause the default queue with the CLI while two real worker processes serve it: a checkout's
confirmation e-mail waits (for 2 s, on either worker), the workers' /metrics show the pause,
and once resumed the e-mail goes out."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skincare_services.local import free_port, stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import api_process, base_env, maildir_count, worker_process
from tests.e2e.metrics_scrape import sample, scrape

pytestmark = pytest.mark.slow


def _skincare(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skincare_services.cli.main", *args]
    done = subprocess.run(
        command, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done


def _paused_gauge(port: str) -> float:
    return sample(
        scrape(f"http://127.0.0.1:{port}/metrics"), "skincare_queue_paused", queue="default"
    )


def test_a_paused_queue_runs_nothing_on_two_workers_until_resumed(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    env, port = base_env(database_url, home)
    ports = [str(free_port()), str(free_port())]
    workers = [
        worker_process({**env, "SKINCARE_METRICS_PORT": p}, home, name=f"worker-{n}")
        for n, p in enumerate(ports)
    ]
    try:
        with api_process(env, port, home) as client:
            assert (
                _skincare(env, "queue", "pause", "default").stdout.strip() == "paused queue default"
            )
            # Every worker holds the pause within a second of it.
            time.sleep(1.0)
            order = client.checkout(shop.user_ids[0], shop.product_ids[0], key="paused-1")
            time.sleep(2.0)
            assert maildir_count(home) == 0
            assert "default" in _skincare(env, "queue", "paused").stdout
            assert "paused queues" in _skincare(env, "queue", "stats").stdout
            assert wait_for(lambda: all(_paused_gauge(p) == 1.0 for p in ports), 15)
            _skincare(env, "queue", "resume", "default")
            assert wait_for(lambda: maildir_count(home) == 1, 30), order
            assert wait_for(lambda: all(_paused_gauge(p) == 0.0 for p in ports), 15)
    finally:
        codes = [stop_process(worker) for worker in workers]
    assert codes == [0, 0]
