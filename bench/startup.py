"""Start-up times: `skincare --help`, and a worker from its start to its first job.

`uv run python -m bench.startup [--runs N]` prints the median and range of each (wall seconds),
with the load average, since the machine may be shared. The worker is started with one job of an
unknown type waiting: it receives it and dead-letters it at once, so the first `job.dead_lettered`
line marks the first receive.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.embedded import database_url
from skincare_core.jobs import new_job
from skincare_postgres import create_engine, postgres_backend, upgrade
from skincare_services.local_env import local_env


def help_seconds() -> float:
    """Wall time of one `skincare --help`."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "skincare_services.cli.main", "--help"],
                   check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - started


async def _enqueue_unknown(url: str) -> None:
    engine = create_engine(url)
    try:
        async with postgres_backend(engine) as backend:
            await backend.queue().enqueue(new_job("bench.startup.unknown"))
    finally:
        await engine.dispose()


def worker_seconds(url: str, home: Path) -> float:
    """Wall time from spawning `skincare-worker` to its first dead-lettered job."""
    anyio.run(_enqueue_unknown, url)
    env = {**os.environ, **local_env(database_url=url, home=home, port=8000)}
    started = time.perf_counter()
    command = [sys.executable, "-m", "skincare_services.worker"]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as worker:
        assert worker.stdout is not None
        for line in worker.stdout:
            if line.startswith("{") and json.loads(line)["message"] == "job.dead_lettered":
                break
        else:
            raise RuntimeError(f"the worker exited ({worker.wait()}) before its first job")
        elapsed = time.perf_counter() - started
        worker.terminate()
        worker.communicate(timeout=60)  # read its last lines, so none meets a closed pipe
    return elapsed


def _summary(name: str, samples: list[float]) -> str:
    low, high, median = min(samples), max(samples), statistics.median(samples)
    return f"{name}: median {median:.3f} s ({low:.3f}-{high:.3f}, n={len(samples)})"


def main() -> None:
    """Measure both and print them beside the load average."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="samples of each")
    runs = parser.parse_args().runs
    print(f"load average before: {os.getloadavg()}")
    print(_summary("skincare --help", [help_seconds() for _ in range(runs)]))
    with database_url() as url, tempfile.TemporaryDirectory() as tmp:
        upgrade(url)
        samples = [worker_seconds(url, Path(tmp)) for _ in range(runs)]
    print(_summary("worker start to first receive", samples))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
