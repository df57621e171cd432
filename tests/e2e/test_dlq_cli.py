"""`skincare dlq show` as an operator runs it, on the Postgres and the SQS backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import boto3
import pytest

from skincare_core.jobs import Backend, Burial, Job, enqueue, new_job
from skincare_postgres import create_engine, postgres_backend
from tests.e2e.e2e_client import base_env
from tests.e2e.sqs_shop import shop_queues, shop_sqs_backend, sqs_env

pytestmark = pytest.mark.slow
Opener = Callable[[], AbstractAsyncContextManager[Backend]]


async def _bury(open_backend: Opener, job: Job) -> None:
    async with open_backend() as backend:
        await enqueue(backend.queue(), job)
        with anyio.fail_after(10):
            while not (messages := await backend.queue().receive(1)):
                pass
        reason = "PermanentJobError: no such product"
        await backend.queue().dead_letter_many([Burial(messages[0], reason)])


def _dlq(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skincare_services.cli.main", "dlq", *args]
    # Logs go to stderr; WARNING keeps that quiet too, so stderr holds only what went wrong.
    quiet = {**os.environ, **env, "SKINCARE_LOG_LEVEL": "WARNING"}
    return subprocess.run(command, env=quiet, capture_output=True, text=True, timeout=60)


def _assert_show_finds_only_the_dead_job(env: dict[str, str], job: Job) -> None:
    shown = _dlq(env, "show", job.id)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {
        "id": job.id,
        "type": job.type,
        "queue": "default",
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
    urls = shop_queues(client, "dlq-cli")
    job = new_job("sync_warehouse_stock", product_id="42")

    def open_backend() -> AbstractAsyncContextManager[Backend]:
        return shop_sqs_backend(client, urls, database_url)

    anyio.run(_bury, open_backend, job)
    env, _ = base_env(database_url, home, **sqs_env("dlq-cli"))
    _assert_show_finds_only_the_dead_job(env, job)


def _move_by_policy(client: Any, queue_url: str, body: str) -> None:
    """Send a raw body and let the redrive policy (maxReceiveCount 1) take it to the DLQ."""
    client.send_message(QueueUrl=queue_url, MessageBody=body)
    client.receive_message(QueueUrl=queue_url, VisibilityTimeout=0, WaitTimeSeconds=1)
    assert client.receive_message(QueueUrl=queue_url).get("Messages") is None


def _printable_lines(output: str) -> list[str]:
    lines = output.splitlines()
    assert all(line.isprintable() for line in lines), lines
    return lines


def test_dlq_list_on_odd_messages_never_crashes_and_shows_fixed_attempts(
    database_url: str, home: Path, moto_endpoint: str
) -> None:
    client = boto3.client("sqs", endpoint_url=moto_endpoint)
    urls = shop_queues(client, "dlq-cli-odd", max_receive_count=1, visibility_timeout=1)
    odd = Job(id="odd-1", type="odd\x1b[31m\u2028type", payload={"note": "caf\u00e9"})
    _move_by_policy(client, urls["default"].queue_url, '{"id": "\\ud800", "type": "t"}')
    _move_by_policy(client, urls["bulk"].queue_url, '{"id": "policy-1", "type": "t"}')

    def open_backend() -> AbstractAsyncContextManager[Backend]:
        return shop_sqs_backend(client, urls, database_url)

    anyio.run(_bury, open_backend, odd)
    env, _ = base_env(database_url, home, **sqs_env("dlq-cli-odd"))
    runs = [_dlq(env, "list") for _ in range(3)]
    assert [run.returncode for run in runs] == [0, 0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    lines = _printable_lines(runs[0].stdout)
    assert lines[-1] == "3 dead job(s)"
    assert any(line.startswith("policy-1 ") and "attempts=1" in line for line in lines)
    assert any("odd\\x1b[31m\\u2028type" in line for line in lines)
    ascii_run = _dlq({**env, "PYTHONIOENCODING": "ascii"}, "list", "--group-by", "type")
    assert ascii_run.returncode == 0, ascii_run.stderr
    assert "odd\\x1b[31m\\u2028type" in _printable_lines(ascii_run.stdout)[-2]
    shown = _dlq({**env, "PYTHONIOENCODING": "ascii"}, "show", "odd-1")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["payload"] == {"note": "caf\u00e9"}
    # Each named queue has its own DLQ; --queue reads one of them.
    bulk = _printable_lines(_dlq(env, "list", "--queue", "bulk").stdout)
    assert bulk[-1] == "1 dead job(s) in queue bulk"
    assert bulk[0].startswith("policy-1 ")
    assert _dlq(env, "count", "--queue", "default").stdout.strip() == "2"
