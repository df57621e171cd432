"""The real API and worker processes reach PostgreSQL through a proxy that cuts or slows the
link for OUTAGE seconds in the middle of a bounded shop load (8 customers, up to 8 orders each:
cart, checkout, a paid webhook delivered twice).

Invariants (`shop_invariants`): every 201 order stored and nothing else, no partial order, no
double payment, every order's confirmation and payment-received e-mails (and its invoice)
within MAIL_WITHIN s, at most one duplicate e-mail per send in flight when the link was cut
(the e-mail queue's concurrency), no dead job, no 5xx but 503 and each 503 with Retry-After;
after a cut, a checkout answers 201 within RECOVERY s and the worker sends an e-mail within
WORK_RESUMES s of the link's return.

Measured: cut, 216-306 answers 503, 201 again 0.08-0.30 s after the return, first e-mail
1.7 s after it, every e-mail 8.6-10.4 s after the load (sends whose ack or record the cut lost
wait out their lease or claim); slow (50 ms a chunk), every e-mail 1.2-5.5 s after the load.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skincare_services.local import wait_for
from tests.faults.conftest import through, upstream_of
from tests.faults.shop_invariants import (
    check_answers,
    check_shop,
    first_mail_after,
    seconds_until_mailed,
)
from tests.faults.shop_invariants import total_stock as stock_of
from tests.faults.shop_load import ShopLoad, running
from tests.faults.shop_processes import CUSTOMERS, EMAIL_CONCURRENCY, seeded, shop_processes
from tests.faults.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow

OUTAGE = 3.0
RECOVERY = 1.0
"""The API answers 201 again within this many seconds of the database's return."""
WORK_RESUMES = 5.0
"""The worker sends an e-mail again within 5 s of the database's return."""
MAIL_WITHIN = 30.0
"""After the load. A send cut between the e-mail and its record waits out its 15 s claim."""


def test_a_cut_database_link_answers_503_and_loses_nothing(
    own_database: str, tmp_path: Path
) -> None:
    shop = seeded(own_database)
    stock = stock_of(own_database)
    with (
        TcpProxy(upstream_of(own_database)) as proxy,
        shop_processes(through(own_database, proxy.port), tmp_path) as client,
    ):
        load = ShopLoad(client, shop, orders_each=8, customers=CUSTOMERS)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            proxy.cut()
            time.sleep(OUTAGE)
            proxy.resume()
            resumed, resumed_at = time.monotonic(), time.time()
            worker_back = first_mail_after(tmp_path, resumed_at, WORK_RESUMES)
        mailed = seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
    recovery = load.first_success_after(resumed)
    outage = [a for a in load.answers if a.status == 503]
    print(
        f"db cut: {len(load.placed)} orders, {len(outage)} x 503, 201 again after"
        f" {recovery:.2f} s, first e-mail {worker_back:.2f} s after the return, every e-mail"
        f" {mailed:.1f} s after the load"
    )
    assert outage, "the cut never reached a request"
    check_answers(load.answers)
    check_shop(
        own_database, tmp_path, load.placed, stock_before=stock, max_duplicates=EMAIL_CONCURRENCY
    )
    assert recovery < RECOVERY


def test_a_slow_database_link_loses_nothing(own_database: str, tmp_path: Path) -> None:
    shop = seeded(own_database)
    stock = stock_of(own_database)
    with (
        TcpProxy(upstream_of(own_database)) as proxy,
        shop_processes(through(own_database, proxy.port), tmp_path) as client,
    ):
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
