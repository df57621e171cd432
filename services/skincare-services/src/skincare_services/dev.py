"""`skincare dev`: the whole system on this machine, kept under .skincare/ between runs."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from pathlib import Path

import anyio

from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_http import issue_token
from skincare_postgres import upgrade
from skincare_services.aws import aws_client
from skincare_services.backends import redrive_receive_count
from skincare_services.local import (
    embedded_postgres,
    moto_server,
    start_process,
    stop_process,
    wait_until_ready,
)
from skincare_services.local_env import DEV_JWT_SECRET, local_env
from skincare_services.seed import seed_demo_data
from skincare_services.settings import load_settings
from skincare_sqs import ensure_queues

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequested(Exception):
    """SIGTERM or SIGHUP (an IDE's stop button, `timeout`, `kill`, a closed terminal)."""


def run_dev(*, queue: str, home: Path, port: int = 8000) -> int:
    """Run PostgreSQL, the API and a worker until Ctrl-C, SIGTERM or SIGHUP; then stop them all.

    `queue` is one of the backends `skincare dev` can run on this machine alone
    (`cli.local_commands.LocalQueue`): with `sqs` it starts a moto server for the queues too.
    """
    try:
        with _stop_signals_raise():
            _run(queue=queue, home=home, port=port)
    except (KeyboardInterrupt, StopRequested):
        pass
    print("dev: stopped", flush=True)
    return 0


@contextmanager
def _stop_signals_raise() -> Iterator[None]:
    def stop(signum: int, _: object) -> None:
        raise StopRequested(signal.Signals(signum).name)

    saved = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS[1:]}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _ignore_stop_signals() -> None:
    # A second Ctrl-C or SIGTERM must not cut the children's drain or PostgreSQL's stop.
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _run(*, queue: str, home: Path, port: int) -> None:
    with ExitStack() as stack:
        # Registered first, so it runs last: every child is stopped by then.
        stack.callback(print, "dev: PostgreSQL stopped", flush=True)
        print(f"dev: PostgreSQL data in {home / 'pg'}", flush=True)
        url = stack.enter_context(embedded_postgres(home / "pg", keep=True))
        upgrade(url)
        users = anyio.run(seed_demo_data, url)
        sqs = None if queue != "sqs" else (stack.enter_context(moto_server()), "skincare-jobs")
        env = local_env(database_url=url, home=home, port=port, sqs=sqs)
        if sqs is not None:
            _create_queues(sqs[0], load_settings(env).max_attempts)
        api = start_process("skincare_services.api", env, sys.stdout.buffer)
        stack.callback(stop_process, api)
        worker = start_process("skincare_services.worker", env, sys.stdout.buffer)
        stack.callback(stop_process, worker)
        stack.callback(print, "\ndev: stopping", flush=True)
        stack.callback(_ignore_stop_signals)  # runs first: nothing may cut the cleanup short
        wait_until_ready(f"http://127.0.0.1:{port}", api)
        _banner(users, home, port)
        while api.poll() is None and worker.poll() is None:
            time.sleep(0.5)


def _create_queues(endpoint: str, max_attempts: int) -> None:
    client = aws_client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    count = redrive_receive_count(max_attempts)
    ensure_queues(client, "skincare-jobs", SHOP_ROUTES.names, max_receive_count=count)


def _banner(users: list[tuple[int, str]], home: Path, port: int) -> None:
    base = f"http://127.0.0.1:{port}"
    print(f"\nAPI      {base}  (OpenAPI: {base}/schema/openapi.json)")
    print(f"mail     {home / 'mail'}\ninvoices {home / 'invoices'}\n")
    for user_id, email in users:
        token = issue_token(DEV_JWT_SECRET, "skincare", user_id, timedelta(days=1))
        print(f"token for {email} (user {user_id}):\n  {token}")
    token = issue_token(DEV_JWT_SECRET, "skincare", users[0][0], timedelta(days=1))
    auth = f'-H "Authorization: Bearer {token}"'
    print("\ncheckout:")
    print(
        f"  curl -X PUT {base}/v1/cart/items/1 {auth} -H 'Content-Type: application/json' "
        "-d '{\"quantity\": 2}'"
    )
    print(f"  curl -X POST {base}/v1/orders {auth} -H 'Idempotency-Key: my-first-order'")
    print("\nCtrl-C (or SIGTERM) stops everything.", flush=True)
