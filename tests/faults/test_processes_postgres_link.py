"""The real API and worker processes reach PostgreSQL through a proxy that cuts or slows the
link for OUTAGE seconds in the middle of a bounded shop load (8 customers, up to 8 orders each:
cart, checkout, a paid webhook delivered twice).

Invariants (`shop_invariants`): every 201 order stored and nothing else, no partial order, no
double payment, every order's confirmation and payment-received e-mails (and its invoice)
within MAIL_WITHIN s, at most one duplicate e-mail per send in flight when the link was cut
(the e-mail queue's concurrency), no dead job, no 5xx but 503 and each 503 with Retry-After;
after a cut, a checkout answers 201 within RECOVERY s of the link's return.

Measured: cut, 64 orders, 260 answers 503, 201 again 0.08-0.18 s after the return, every
e-mail 9.6 s after it (sends whose ack or record the cut lost wait out their lease); slow
(50 ms a chunk), 32 orders, every e-mail 1.2 s after the load.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from skincare_services.local import stop_process, wait_for
from skincare_services.seed import SeededShop, seed_shop
from tests.e2e.e2e_client import ShopClient, api_process, base_env, worker_process
from tests.faults.conftest import through, upstream_of
from tests.faults.shop_invariants import check_answers, check_shop, seconds_until_mailed
from tests.faults.shop_invariants import total_stock as stock_of
from tests.faults.shop_load import ShopLoad, running
from tests.faults.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow

CUSTOMERS = 8
OUTAGE = 3.0
RECOVERY = 1.0
"""Issue 19, fault 1: 201 again within 1 s of the database's return."""
VISIBILITY = 5
"""Seconds of a job's lease: an ack or nack the cut lost leaves its job to be delivered again
once this runs out (30 s by default, which would stretch the test, not change what it shows)."""
MAIL_WITHIN = 30.0
"""A send cut between the e-mail and its record waits out its 15 s claim before it repeats."""
EMAIL_CONCURRENCY = 4
WORKER_ENV = {
    "SKINCARE_WORKER_QUEUES": f"critical=4,default={EMAIL_CONCURRENCY},bulk=2",
    "SKINCARE_VISIBILITY_TIMEOUT_SECONDS": str(VISIBILITY),
}


@contextmanager
def _shop_behind_proxy(url: str, home: Path) -> Iterator[tuple[TcpProxy, ShopClient]]:
    """The API and the worker as real processes, both on PostgreSQL through a proxy."""
    with TcpProxy(upstream_of(url)) as proxy:
        env, port = base_env(through(url, proxy.port), home, **WORKER_ENV)
        worker = worker_process(env, home)
        try:
            with api_process(env, port, home) as client:
                yield proxy, client
        finally:
            stop_process(worker)


def _seeded(url: str) -> SeededShop:
    return anyio.run(lambda: seed_shop(url, users=CUSTOMERS, stock=10_000))


def test_a_cut_database_link_answers_503_and_loses_nothing(
    own_database: str, tmp_path: Path
) -> None:
    shop = _seeded(own_database)
    stock = stock_of(own_database)
    with _shop_behind_proxy(own_database, tmp_path) as (proxy, client):
        load = ShopLoad(client, shop, orders_each=8, customers=CUSTOMERS)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            proxy.cut()
            time.sleep(OUTAGE)
            proxy.resume()
            resumed = time.monotonic()
        seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
        mailed = time.monotonic() - resumed
    recovery = load.first_success_after(resumed)
    outage = [a for a in load.answers if a.status == 503]
    print(
        f"db cut: {len(load.placed)} orders, {len(outage)} x 503, 201 again after"
        f" {recovery:.2f} s, every e-mail {mailed:.1f} s after the link's return"
    )
    assert outage, "the cut never reached a request"
    check_answers(load.answers)
    check_shop(
        own_database, tmp_path, load.placed, stock_before=stock, max_duplicates=EMAIL_CONCURRENCY
    )
    assert recovery < RECOVERY


def test_a_slow_database_link_loses_nothing(own_database: str, tmp_path: Path) -> None:
    shop = _seeded(own_database)
    stock = stock_of(own_database)
    with _shop_behind_proxy(own_database, tmp_path) as (proxy, client):
        load = ShopLoad(client, shop, orders_each=4, customers=CUSTOMERS)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            proxy.slow(0.05)
            time.sleep(OUTAGE)
            proxy.resume()
        mailed = seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
    print(f"db slow: {len(load.placed)} orders, every e-mail {mailed:.1f} s after the load")
    check_answers(load.answers)
    check_shop(own_database, tmp_path, load.placed, stock_before=stock, max_duplicates=0)
