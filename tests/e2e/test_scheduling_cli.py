"""The scheduling commands as an operator runs them: `skincare jobs cancel`, `skincare dlq ...
--queue`, and `skincare-worker --queues`."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs import Burial, Job, enqueue, new_job
from skincare_postgres import create_engine, postgres_backend
from tests.e2e.e2e_client import base_env

pytestmark = pytest.mark.slow


def _run(env: dict[str, str], module: str, *args: str) -> subprocess.CompletedProcess[str]:
    # The process logs JSON on stdout too: only warnings, so stdout is the command's answer.
    quiet = {**os.environ, **env, "SKINCARE_LOG_LEVEL": "WARNING"}
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, env=quiet, capture_output=True, text=True, timeout=60)


def _skincare(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return _run(env, "skincare_services.cli.main", *args)


async def _enqueue_and_bury(url: str, later: Job, dead: dict[str, Job]) -> None:
    engine = create_engine(url)
    try:
        async with postgres_backend(engine, queues=["default", *dead]) as backend:
            await enqueue(backend.queue(), later, delay=timedelta(hours=1))
            for name, job in dead.items():
                await enqueue(backend.queue(name), job)
                with anyio.fail_after(10):
                    while not (messages := await backend.queue(name).receive(1)):
                        pass
                reason = f"PermanentJobError: {name}"
                await backend.queue(name).dead_letter_many([Burial(messages[0], reason)])
    finally:
        await engine.dispose()


def test_cancel_and_the_dead_letters_of_one_queue(database_url: str, home: Path) -> None:
    later = new_job("send_confirmation_email", order_id="7")
    dead = {"critical": new_job("process_payment", event_id="e"), "bulk": new_job("report")}
    anyio.run(_enqueue_and_bury, database_url, later, dead)
    env, _ = base_env(database_url, home)

    cancelled = _skincare(env, "jobs", "cancel", later.id)
    assert (cancelled.returncode, cancelled.stdout) == (
        0,
        f"cancelled job {later.id} (queue default)\n",
    )
    again = _skincare(env, "jobs", "cancel", later.id)
    assert again.returncode == 1
    assert again.stdout.splitlines() == [
        f"no waiting or scheduled job {later.id}: it ran, runs now, or never existed"
    ]

    listed = _skincare(env, "dlq", "list", "--queue", "critical")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[-1] == "1 dead job(s) in queue critical"
    [line] = lines[:-1]
    assert dead["critical"].id in line
    assert "queue=critical" in line
    assert "PermanentJobError: critical" in line

    redriven = _skincare(env, "dlq", "redrive", "--all", "--queue", "bulk")
    assert (redriven.returncode, redriven.stdout) == (0, "redriven 1 job(s)\n")
    assert _skincare(env, "dlq", "list").stdout.splitlines()[-1] == "1 dead job(s)"


def test_the_worker_refuses_a_queue_it_is_not_configured_for(database_url: str, home: Path) -> None:
    env, _ = base_env(database_url, home, SKINCARE_WORKER_QUEUES="critical=2,default=2")
    refused = _run(env, "skincare_services.worker", "--queues", "critical,bulk")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "skincare-worker: --queues: 'bulk' is not one of SKINCARE_WORKER_QUEUES: critical, default"
    ]
