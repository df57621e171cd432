"""The real API and worker's log lines: a service field on each, the request id on every line of
a request and one access line for it, a job's id, type, attempts and order id on every line it
logs, and no terminal colour codes anywhere."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from skincare_http import issue_token
from skincare_services.local import stop_process, wait_for
from skincare_services.local_env import DEV_JWT_SECRET, signed_payment
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import api_process, base_env, log_records, pdf_count, worker_process

pytestmark = pytest.mark.slow
JOB_LINES = ("job.", "invoice.", "payment.", "email.")


def _order_and_payment(env: dict[str, str], port: int, home: Path, shop: SeededShop) -> int:
    with api_process(env, port, home) as client:
        user, product = shop.user_ids[0], shop.product_ids[0]
        token = issue_token(DEV_JWT_SECRET, "skincare", user, timedelta(minutes=5))
        auth = {"Authorization": f"Bearer {token}"}
        put = client.http.put(f"/v1/cart/items/{product}", json={"quantity": 1}, headers=auth)
        assert put.status_code == 200, put.text
        headers = {**auth, "Idempotency-Key": "log-1", "X-Request-ID": "req-checkout-1"}
        placed = client.http.post("/v1/orders", headers=headers)
        assert placed.headers["x-request-id"] == "req-checkout-1"
        order = dict(placed.json())
        webhook = signed_payment(order, "evt-log-1")
        headers = {**webhook.headers, "X-Request-ID": "req-pay-1"}
        paid = client.http.post("/v1/payments/webhook", content=webhook.body, headers=headers)
        assert paid.status_code == 200, paid.text
        assert wait_for(lambda: pdf_count(home) == 1, 60)
    return int(str(order["order_id"]))


def test_every_line_says_which_service_request_or_job_it_belongs_to(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    env, port = base_env(database_url, home)
    worker = worker_process(env, home)
    try:
        order_id = _order_and_payment(env, port, home, shop)
    finally:
        assert stop_process(worker) == 0
    for name in ("api.log", "worker.log"):
        assert "\\u001b" not in (home / name).read_text()
    api, jobs = log_records(home / "api.log"), log_records(home / "worker.log")
    assert {line["service"] for line in api} == {"api"}
    assert {line["service"] for line in jobs} == {"worker"}
    access = [line for line in api if line["message"] == "http.request"]
    checkout = [line for line in access if line["request_id"] == "req-checkout-1"]
    assert [(c["method"], c["route"], c["status"]) for c in checkout] == [
        ("POST", "/v1/orders", 201)
    ]
    assert isinstance(checkout[0]["duration_ms"], float)
    made = [str(line["request_id"]) for line in access]
    made.remove("req-checkout-1")
    made.remove("req-pay-1")
    assert len(set(made)) == len(made)
    assert all(len(request_id) == 32 for request_id in made)
    done = [line for line in jobs if line["message"] == "job.done"]
    assert {line["type"] for line in done} == {
        "send_confirmation_email", "process_payment", "send_payment_received_email",
        "generate_invoice_pdf",
    }  # fmt: skip
    assert all(line["order_id"] == order_id and line["attempts"] == 1 for line in done)
    of_jobs = [line for line in jobs if str(line["message"]).startswith(JOB_LINES)]
    assert {"invoice.stored", "payment.applied"} <= {line["message"] for line in of_jobs}
    ids = {line["job_id"] for line in done}
    assert all(line["job_id"] in ids and line["order_id"] == order_id for line in of_jobs)
