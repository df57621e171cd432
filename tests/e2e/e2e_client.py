"""Drives the real API over HTTP and starts the real processes, for the end-to-end tests."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx

from skincare_http import issue_token
from skincare_services.local import (
    free_port,
    start_process,
    stop_process,
    wait_until_ready,
)
from skincare_services.local_env import DEV_JWT_SECRET, local_env, signed_payment


class ShopClient:
    """A customer and a payment gateway talking to the API."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)

    def auth_headers(self, user_id: int) -> dict[str, str]:
        """The customer's bearer token header."""
        token = issue_token(DEV_JWT_SECRET, "skincare", user_id, timedelta(minutes=30))
        return {"Authorization": f"Bearer {token}"}

    def checkout(self, user_id: int, product_id: int, key: str) -> dict[str, object]:
        """Put one product in the cart and check out; returns the order body."""
        auth = self.auth_headers(user_id)
        put = self.http.put(f"/v1/cart/items/{product_id}", json={"quantity": 1}, headers=auth)
        put.raise_for_status()
        response = self.http.post("/v1/orders", headers={**auth, "Idempotency-Key": key})
        assert response.status_code == 201, response.text
        return dict(response.json())

    def pay(self, order: dict[str, object], event_id: str) -> int:
        """Deliver a signed paid webhook for the order; returns the status code."""
        return self.pay_response(order, event_id).status_code

    def pay_response(self, order: dict[str, object], event_id: str) -> httpx.Response:
        """Deliver a signed paid webhook for the order; the API's answer."""
        webhook = signed_payment(order, event_id)
        return self.http.post("/v1/payments/webhook", content=webhook.body, headers=webhook.headers)

    def order_status(self, user_id: int, order_id: object) -> str:
        """The order's status as its owner sees it."""
        response = self.http.get(f"/v1/orders/{order_id}", headers=self.auth_headers(user_id))
        return str(response.json()["status"])


def base_env(database_url: str, home: Path, **extra: str) -> tuple[dict[str, str], int]:
    """Process environment and API port for a test run."""
    port = free_port()
    env = local_env(database_url=database_url, home=home, port=port)
    return {**env, **extra}, port


@contextmanager
def api_process(env: dict[str, str], port: int, home: Path) -> Iterator[ShopClient]:
    """The real `skincare-api` process, ready to serve."""
    with (home / "api.log").open("ab") as log:
        process = start_process("skincare_services.api", env, log)
        try:
            wait_until_ready(f"http://127.0.0.1:{port}", process)
            client = ShopClient(f"http://127.0.0.1:{port}")
            with client.http:
                yield client
        finally:
            stop_process(process)


def worker_process(
    env: dict[str, str], home: Path, name: str = "worker"
) -> subprocess.Popen[bytes]:
    """Start the real `skincare-worker` process, logging into home/<name>.log."""
    with (home / f"{name}.log").open("ab") as log:
        return start_process("skincare_services.worker", env, log)


def log_records(path: Path) -> list[dict[str, object]]:
    """The JSON log lines of a process."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.startswith("{")]


def maildir_count(home: Path) -> int:
    """Messages delivered into the maildir."""
    mail = home / "mail"
    return sum(1 for p in mail.glob("*/*") if p.is_file() and p.parent.name != "tmp")


def pdf_count(home: Path) -> int:
    """Invoice PDFs stored."""
    return sum(1 for _ in (home / "invoices").rglob("*.pdf"))
