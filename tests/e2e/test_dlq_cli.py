"""`skincare dlq show` as an operator runs it, on the Postgres and the SQS backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import boto3
import pytest
from e2e_client import base_env

from skincare_core.jobs import Backend, Job, new_job
from skincare_postgres import create_engine, postgres_backend
from skincare_sqs import ensure_queues, sqs_backend

pytestmark = pytest.mark.slow
Opener = Callable[[], AbstractAsyncContextManager[Backend]]


async def _bury(open_backend: Opener, job: Job) -> None:
    async with open_backend() as backend:
        await backend.queue.enqueue(job)
        with anyio.fail_after(10):
            while not (messages := await backend.queue.receive(1)):
                pass
        await backend.queue.dead_letter(messages[0], "PermanentJobError: no such product")


def _dlq(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skincare_services.cli.main", "dlq", *args]
    # The process logs JSON on stdout too: only warnings, so stdout is the command's answer.
    quiet = {**os.environ, **env, "SKINCARE_LOG_LEVEL": "WARNING"}
    return subprocess.run(command, env=quiet, capture_output=True, text=True, timeout=60)


def _assert_show_finds_only_the_dead_job(env: dict[str, str], job: Job) -> None:
    shown = _dlq(env, "show", job.id)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {
        "id": job.id,
        "type": job.type,
        "payload": dict(job.payload),
        "attempts": 1,
        "error": "PermanentJobError: no such product",
    }
    missing = _dlq(env, "show", "no-such-job")
    assert (missing.returncode, missing.stdout) == (1, "no dead job no-such-job\n")


def test_dlq_show_on_the_postgres_queue(database_url: str, home: Path) -> None:
    job = new_job("sync_warehouse_stock", product_id="42")

    async def bury() -> None:
        engine = create_engine(database_url)
        try:
            await _bury(lambda: postgres_backend(engine), job)
        finally:
            await engine.dispose()

    anyio.run(bury)
    env, _ = base_env(database_url, home)
    _assert_show_finds_only_the_dead_job(env, job)


def test_dlq_show_on_the_sqs_queue(database_url: str, home: Path, moto_endpoint: str) -> None:
    client = boto3.client("sqs", endpoint_url=moto_endpoint)
    urls = ensure_queues(client, "dlq-cli")
    job = new_job("sync_warehouse_stock", product_id="42")

    def open_backend() -> AbstractAsyncContextManager[Backend]:
        return sqs_backend(
            client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, outbox=None, wait_time_seconds=1
        )

    anyio.run(_bury, open_backend, job)
    env, _ = base_env(
        database_url,
        home,
        SKINCARE_QUEUE="sqs",
        SKINCARE_SQS_QUEUE_URL=urls.queue_url,
        SKINCARE_SQS_DLQ_URL=urls.dlq_url,
    )
    _assert_show_finds_only_the_dead_job(env, job)
