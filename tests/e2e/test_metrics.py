"""The API's and the worker's /metrics after a known load, and the worker's /healthz, through
the real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import boto3
import httpx
import pytest

from skincare_core.jobs import enqueue, new_job
from skincare_postgres import create_engine, postgres_backend
from skincare_services.local import free_port, stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import api_process, base_env, worker_process
from tests.e2e.metrics_scrape import sample, scrape
from tests.e2e.sqs_shop import shop_queues, sqs_env

pytestmark = pytest.mark.slow
CHECKOUTS = 8
CONFIRMATION = "send_confirmation_email"


async def _enqueue_poison(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with postgres_backend(engine) as backend:
            await enqueue(backend.queue(), new_job("e2e.no_such_type"))
    finally:
        await engine.dispose()


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _settled(samples: Samples, depth_queue: str) -> bool:
    """Every confirmation done, the poison job dead, and the depth gauges caught up (they are
    cached for a few seconds)."""
    done = sample(
        samples, "skincare_jobs_total", queue="default", type=CONFIRMATION, outcome="done"
    )
    dead = sample(
        samples, "skincare_jobs_total", queue="default", type="e2e.no_such_type",
        outcome="dead_lettered",
    )  # fmt: skip
    depth = {
        state: sample(samples, "skincare_queue_jobs", queue=depth_queue, state=state)
        for state in ("ready", "dead")
    }
    return (done, dead, depth["ready"], depth["dead"]) == (CHECKOUTS, 1, 0, 1)


def _run_known_load(env: dict[str, str], port: int, home: Path, shop: SeededShop) -> Samples:
    """CHECKOUTS checkouts and one poison job; the API's samples once the worker's settled."""
    worker_url = f"http://127.0.0.1:{env['SKINCARE_METRICS_PORT']}"
    with api_process(env, port, home) as client:
        for n in range(CHECKOUTS):
            client.checkout(shop.user_ids[n], shop.product_ids[0], key=f"metrics-{n}")
        anyio.run(_enqueue_poison, env["SKINCARE_DATABASE_URL"])
        # The default queue's depth, on SQS from its own SQS queue and DLQ as on Postgres.
        assert wait_for(lambda: _settled(scrape(worker_url + "/metrics"), "default"), 60)
        return scrape(f"http://127.0.0.1:{port}/metrics")


def _assert_api_counted(api: Samples) -> None:
    assert sample(api, "skincare_checkouts_placed_total") == CHECKOUTS
    ok = {"method": "POST", "route": "/v1/orders", "status": "201"}
    assert sample(api, "skincare_http_requests_total", **ok) == CHECKOUTS
    latency = {"method": "POST", "route": "/v1/orders"}
    assert sample(api, "skincare_http_request_duration_seconds_count", **latency) == CHECKOUTS


def test_both_processes_count_a_known_load(database_url: str, shop: SeededShop, home: Path) -> None:
    metrics_port = free_port()
    env, port = base_env(database_url, home, SKINCARE_METRICS_PORT=str(metrics_port))
    worker = worker_process(env, home)
    worker_url = f"http://127.0.0.1:{metrics_port}"
    try:
        api = _run_known_load(env, port, home, shop)
        worker_samples = scrape(worker_url + "/metrics")
        health = httpx.get(worker_url + "/healthz", timeout=5)
        probe = _container_healthcheck(metrics_port)
    finally:
        assert stop_process(worker) == 0
    _assert_api_counted(api)
    durations = sample(worker_samples, "skincare_job_duration_seconds_count", type=CONFIRMATION)
    assert durations == CHECKOUTS
    assert sample(worker_samples, "skincare_jobs_in_flight") == 0
    pickups = "skincare_job_pickup_latency_seconds_count"
    assert sample(worker_samples, pickups, type=CONFIRMATION) == CHECKOUTS
    assert health.status_code == 200
    assert probe.returncode == 0, probe.stderr


def test_on_sqs_the_outbox_backlog_drains_and_the_poison_job_is_in_the_dlq(
    database_url: str, shop: SeededShop, home: Path, moto_endpoint: str
) -> None:
    shop_queues(boto3.client("sqs", endpoint_url=moto_endpoint), "e2e-metrics")
    env, port = base_env(
        database_url,
        home,
        SKINCARE_METRICS_PORT=str(free_port()),
        **sqs_env("e2e-metrics"),
    )
    worker = worker_process(env, home)
    try:
        api = _run_known_load(env, port, home, shop)
        worker_samples = scrape(f"http://127.0.0.1:{env['SKINCARE_METRICS_PORT']}/metrics")
    finally:
        assert stop_process(worker) == 0
    _assert_api_counted(api)
    assert sample(worker_samples, "skincare_outbox_backlog") == 0
    # Each checkout's expire_unpaid_order job waits in the outbox until the payment window ends.
    assert sample(worker_samples, "skincare_outbox_scheduled") == CHECKOUTS
    pickups = "skincare_job_pickup_latency_seconds_count"
    assert sample(worker_samples, pickups, type=CONFIRMATION) == CHECKOUTS


def _container_healthcheck(metrics_port: int) -> subprocess.CompletedProcess[str]:
    """The worker image's HEALTHCHECK command, as the Dockerfile states it, run here."""
    dockerfile = (Path(__file__).parents[2] / "Dockerfile").read_text()
    worker_stage = dockerfile.split("FROM runtime AS worker", 1)[1]
    command = json.loads(worker_stage.split("CMD ", 1)[1].splitlines()[0])
    assert command[0] == "python"
    env = {**os.environ, "SKINCARE_METRICS_PORT": str(metrics_port)}
    return subprocess.run(
        [sys.executable, *command[1:]], env=env, capture_output=True, text=True, timeout=30
    )
