"""200 checkouts from 20 users, each paid twice by webhook, through the real processes (run
unmeasured: a load the other end-to-end tests measure in small)."""

from __future__ import annotations

import email
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest

from skincare_services.local import stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import (
    ShopClient,
    api_process,
    base_env,
    maildir_count,
    pdf_count,
    worker_process,
)
from tests.e2e.sqs_shop import shop_queues, sqs_env
from tests.unmeasured import unmeasured

pytestmark = pytest.mark.slow
# A user id and the order the API answered for them.
Order = tuple[int, dict[str, object]]
ORDERS_PER_USER = 10


def _orders_of_user(client: ShopClient, shop: SeededShop, index: int) -> list[Order]:
    user_id = shop.user_ids[index]
    orders = []
    for n in range(ORDERS_PER_USER):
        order = client.checkout(user_id, shop.product_ids[n % 3], key=f"u{user_id}-o{n}")
        assert client.pay(order, f"evt-{order['order_id']}") == 200
        assert client.pay(order, f"evt-{order['order_id']}") == 200
        orders.append((user_id, order))
    return orders


def _run(client: ShopClient, shop: SeededShop) -> list[Order]:
    with ThreadPoolExecutor(max_workers=len(shop.user_ids)) as pool:
        batches = pool.map(lambda i: _orders_of_user(client, shop, i), range(len(shop.user_ids)))
    return [order for batch in batches for order in batch]


def _mail_per_order(home: Path) -> Counter[tuple[str, str]]:
    seen: Counter[tuple[str, str]] = Counter()
    for path in (home / "mail").glob("*/*"):
        message = email.message_from_bytes(path.read_bytes())
        seen[(str(message["X-Skincare-Order"]), str(message["X-Skincare-Notification"]))] += 1
    return seen


def _assert_everything_done(client: ShopClient, home: Path, orders: list[Order]) -> None:
    total = len(orders)
    done = wait_for(lambda: pdf_count(home) == total and maildir_count(home) == 2 * total, 180)
    assert done, (pdf_count(home), maildir_count(home))
    assert all(client.order_status(user, order["order_id"]) == "paid" for user, order in orders)
    mail = _mail_per_order(home)
    for _, order in orders:
        number = str(order["order_number"])
        assert mail[(number, "order_confirmation")] == 1
        assert mail[(number, "payment_received")] == 1


def test_postgres_queue_end_to_end(database_url: str, shop: SeededShop, home: Path) -> None:
    env, port = base_env(database_url, home)
    env = unmeasured(env)
    worker = worker_process(env, home)
    try:
        with api_process(env, port, home) as client:
            orders = _run(client, shop)
            assert len(orders) == 200
            _assert_everything_done(client, home, orders)
    finally:
        assert stop_process(worker) == 0


def test_sqs_queue_end_to_end(
    database_url: str, shop: SeededShop, home: Path, moto_endpoint: str
) -> None:
    shop_queues(boto3.client("sqs", endpoint_url=moto_endpoint), "e2e-jobs")
    env, port = base_env(database_url, home, **sqs_env("e2e-jobs"))
    env = unmeasured(env)
    worker = worker_process(env, home)
    try:
        with api_process(env, port, home) as client:
            orders = _run(client, shop)
            _assert_everything_done(client, home, orders)
    finally:
        assert stop_process(worker) == 0
