"""The worker as the services compose it, behind a proxy that stalls SQS and then resumes.

A stall (connections accepted, nothing answered) must be logged within 10 s, and a job sent
during the stall must be done within 5 s of the endpoint's return. The endpoint returns at the
worst moment: just after the worker sent a request on a connection the stall will never answer.

The job becomes visible only after the long poll in flight when the stall began has ended: a
message handed to a receive whose answer is lost stays hidden for its visibility timeout, which
no client setting can shorten.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from skincare_core.jobs.job import Job, new_job
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_services.aws import READ_TIMEOUT_SECONDS, SQS_LONG_POLL_SECONDS
from skincare_services.compose import worker_process
from skincare_services.settings import load_settings
from tests.faults.tcp_proxy import TcpProxy
from tests.sqs.conftest import ProvisionNamed

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
STALL_SECONDS = 8.0


def _settings(tmp_path: Path, database_url: str, prefix: str) -> dict[str, str]:
    # The database holds the SQS backend's job ledger.
    return {
        "SKINCARE_DATABASE_URL": database_url,
        "SKINCARE_WEBHOOK_SECRET": "whsec",
        "SKINCARE_JWT_SECRET": "jwtsec-long-enough-for-32-bytes-0123456789",
        "SKINCARE_MAILDIR": str(tmp_path / "mail"),
        "SKINCARE_INVOICE_DIR": str(tmp_path / "invoices"),
        "SKINCARE_QUEUE": "sqs",
        "SKINCARE_SQS_QUEUE_PREFIX": prefix,
    }


def _warnings_since(caplog: pytest.LogCaptureFixture, since: float) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.levelno >= logging.WARNING
        and record.name.startswith("skincare")
        and record.created >= since
    ]


async def _wait_until(condition: Callable[[], bool], within: float) -> float:
    """Seconds until `condition()` held; TimeoutError after `within`."""
    start = time.monotonic()
    with anyio.fail_after(within):
        while not condition():  # noqa: ASYNC110 - set by log records and worker threads
            await anyio.sleep(0.05)
    return time.monotonic() - start


async def test_a_stalled_endpoint_is_logged_within_10_s_and_work_resumes_within_5_s(
    sqs_client: Any,
    fresh_named_queues: ProvisionNamed,
    database_url: str,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.WARNING)
    prefix = f"stall-{uuid.uuid4().hex[:8]}"
    urls = fresh_named_queues(SHOP_ROUTES.names, visibility_timeout=30, prefix=prefix)["default"]
    done: dict[str, float] = {}

    async def probe(job: Job) -> None:
        done[job.id] = time.monotonic()

    def send(job: Job, delay: int = 0) -> None:
        # Straight to moto: only the worker's traffic goes through the proxy.
        body = f'{{"id": "{job.id}", "type": "{job.type}"}}'
        sqs_client.send_message(QueueUrl=urls.queue_url, MessageBody=body, DelaySeconds=delay)

    moto = urlsplit(moto_endpoint)
    with TcpProxy((str(moto.hostname), int(moto.port or 80))) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.address)
        settings = load_settings(_settings(tmp_path, database_url, prefix))
        handlers = {"stall.probe": probe}
        async with (
            worker_process(settings=settings, handlers=handlers, queues=["default"]) as process,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(process.workers["default"].run)
            warm_up, stalled_job = new_job("stall.probe"), new_job("stall.probe")
            send(warm_up)
            await _wait_until(lambda: warm_up.id in done, within=10)
            proxy.stall()
            stalled_at = time.time()
            send(stalled_job, delay=SQS_LONG_POLL_SECONDS + 1)
            logged_after = await _wait_until(
                lambda: bool(_warnings_since(caplog, stalled_at)), within=10
            )
            await anyio.sleep(max(0.0, stalled_at + STALL_SECONDS - time.time()))
            assert stalled_job.id not in done
            accepted = proxy.accepted
            await _wait_until(lambda: proxy.accepted > accepted, within=READ_TIMEOUT_SECONDS + 2)
            proxy.resume()
            resumed_at = time.monotonic()
            await _wait_until(lambda: stalled_job.id in done, within=5)
            tg.cancel_scope.cancel()
    resumed_after = done[stalled_job.id] - resumed_at
    print(f"\nstall logged after {logged_after:.1f} s; job done {resumed_after:.1f} s after resume")
    print(_warnings_since(caplog, stalled_at)[0].getMessage())
