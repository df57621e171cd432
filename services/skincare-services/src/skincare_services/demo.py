"""`skincare demo`: a scripted walkthrough on a fresh instance; exit 0 only if every step held."""

from __future__ import annotations

import json
import tempfile
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import anyio
import httpx

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job, new_job_id
from skincare_core.shop.job_types import SEND_CONFIRMATION_EMAIL
from skincare_http import issue_token
from skincare_postgres import create_engine, postgres_backend, upgrade
from skincare_services.local import (
    embedded_postgres,
    free_port,
    start_process,
    stop_process,
    wait_for,
    wait_until_ready,
)
from skincare_services.local_env import DEV_JWT_SECRET, local_env, signed_payment
from skincare_services.seed import seed_demo_data

Check = tuple[str, bool, str]


def run_demo() -> int:
    """Run the walkthrough and print what happened."""
    checks: list[Check] = []
    with tempfile.TemporaryDirectory(prefix="skincare-demo-") as tmp, ExitStack() as stack:
        home = Path(tmp)
        print(f"demo: starting PostgreSQL, API and worker under {home}", flush=True)
        url = stack.enter_context(embedded_postgres(home / "pg", keep=False))
        upgrade(url)
        users = anyio.run(seed_demo_data, url)
        port = free_port()
        env = local_env(database_url=url, home=home, port=port)
        log = stack.enter_context((home / "worker.log").open("wb"))
        api_log = stack.enter_context((home / "api.log").open("wb"))
        api = start_process("skincare_services.api", env, api_log)
        worker = start_process("skincare_services.worker", env, log)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(base, api)
            _walk(base, users[0][0], home, url, checks)
        finally:
            checks.append(("worker stops cleanly on SIGTERM", stop_process(worker) == 0, ""))
            stop_process(api)
        checks += _log_checks(home / "worker.log")
    _print(checks)
    return 0 if all(ok for _, ok, _ in checks) else 1


def _walk(base: str, user_id: int, home: Path, url: str, checks: list[Check]) -> None:
    token = issue_token(DEV_JWT_SECRET, "skincare", user_id, timedelta(minutes=10))
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10)
    products = client.get("/v1/products").json()["products"]
    for product, quantity in zip(products[:2], (2, 1), strict=True):
        client.put(f"/v1/cart/items/{product['id']}", json={"quantity": quantity})
    first = client.post("/v1/orders", headers={"Idempotency-Key": "demo-checkout-1"})
    again = client.post("/v1/orders", headers={"Idempotency-Key": "demo-checkout-1"})
    order = first.json()
    checks.append(("checkout answers 201", first.status_code == 201, order["order_number"]))
    same = again.json()["order_id"] == order["order_id"]
    checks.append(("same Idempotency-Key, same order", same, f"order {order['order_id']}"))
    codes = [_webhook(client, order) for _ in range(2)]
    checks.append(("webhook delivered twice, both 200", codes == [200, 200], str(codes)))
    paid = wait_for(
        lambda: client.get(f"/v1/orders/{order['order_id']}").json()["status"] == "paid", 30
    )
    checks.append(("order paid by the worker", paid, ""))
    wait_for(lambda: _count(home / "mail", "*/*") >= 2, 30)
    mails = _count(home / "mail", "*/*")
    checks.append(("confirmation + payment e-mail", mails == 2, f"{mails} in {home / 'mail'}"))
    pdf = wait_for(lambda: _count(home / "invoices", "**/*.pdf") == 1, 30)
    checks.append(("one invoice PDF", pdf, order["order_number"] + ".pdf"))
    checks.append(_poison(url))


def _webhook(client: httpx.Client, order: dict[str, object]) -> int:
    webhook = signed_payment(order, "evt-demo-1")
    return client.post(
        "/v1/payments/webhook", content=webhook.body, headers=webhook.headers
    ).status_code


def _poison(url: str) -> Check:
    async def bury() -> str:
        engine = create_engine(url)
        poison = Job(new_job_id(), SEND_CONFIRMATION_EMAIL, {"order_id": "not-a-number"})
        try:
            async with postgres_backend(engine) as backend:
                await enqueue(backend.queue(), poison)
                with anyio.move_on_after(20):
                    # The worker is another process: poll, no event to wait on.
                    while (dead := await backend.dead_letters.get(poison.id)) is None:  # noqa: ASYNC110
                        await anyio.sleep(0.2)
                    return dead.error
            return ""
        finally:
            await engine.dispose()

    reason = anyio.run(bury)
    return ("poison job ends in dead letters", bool(reason), reason)


def _log_checks(path: Path) -> list[Check]:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
    done = [r for r in records if r.get("message") == "job.done"]
    payments = [r for r in done if r.get("type") == "process_payment"]
    detail = f"{len(done)} jobs done, {len(payments)} payment job for 2 webhook deliveries"
    return [("duplicate webhook ignored (one payment job)", len(payments) == 1, detail)]


def _count(root: Path, pattern: str) -> int:
    return sum(1 for p in root.glob(pattern) if p.is_file()) if root.exists() else 0


def _print(checks: list[Check]) -> None:
    width = max(len(name) for name, _, _ in checks)
    print()
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name:<{width}}  {detail}")
    print(f"\n{sum(ok for _, ok, _ in checks)}/{len(checks)} steps held")
