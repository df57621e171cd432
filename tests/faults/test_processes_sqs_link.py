"""The real worker reaches SQS (moto's server) through a proxy that cuts or stalls the link for
OUTAGE seconds in the middle of a bounded shop load (8 customers, up to 6 orders each: cart,
checkout, a paid webhook delivered twice); the API never talks to SQS.

Invariants (`shop_invariants`): every 201 order stored and nothing else, no partial order, no
double payment, an e-mail sent within WORK_RESUMES s of the link's return, every order's
e-mails and invoice within MAIL_WITHIN s of the load's end, at most one duplicate e-mail per
send in flight, no message in any DLQ (by the worker or by maxReceiveCount), and the customers
see no error at all.

Measured: cut, first e-mail 0.19 s after the return, every e-mail 8.6 s after the load; stall,
0.10-0.17 s and 6.1-7.5 s.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import pytest

from skincare_services.local import wait_for
from tests.e2e.sqs_shop import shop_queues, sqs_env
from tests.faults.shop_invariants import (
    check_shop,
    first_mail_after,
    seconds_until_mailed,
    sqs_dead_letters,
    total_stock,
)
from tests.faults.shop_load import ShopLoad, running
from tests.faults.shop_processes import (
    CUSTOMERS,
    EMAIL_CONCURRENCY,
    VISIBILITY,
    seeded,
    shop_processes,
)
from tests.faults.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow

OUTAGE = 3.0
WORK_RESUMES = 5.0
"""Work resumes within this many seconds of the endpoint's return."""
MAIL_WITHIN = 30.0
"""After the load: a receive or ack the fault swallowed costs its job one lease (VISIBILITY),
and a loaded machine's worker sends the shop load's 96 e-mails several times slower."""


def _moto_address(endpoint: str) -> tuple[str, int]:
    parts = urlsplit(endpoint)
    return (parts.hostname or "127.0.0.1", parts.port or 80)


@pytest.mark.parametrize("fault", ["cut", "stall"])
def test_a_cut_or_stalled_sqs_link_loses_nothing(
    fault: str, own_database: str, moto_endpoint: str, tmp_path: Path
) -> None:
    prefix = f"faults-{uuid.uuid4().hex[:8]}"
    sqs = boto3.client("sqs", endpoint_url=moto_endpoint)
    urls = shop_queues(sqs, prefix, visibility_timeout=VISIBILITY)
    shop = seeded(own_database)
    stock = total_stock(own_database)
    with (
        TcpProxy(_moto_address(moto_endpoint)) as proxy,
        shop_processes(
            own_database, tmp_path, **sqs_env(prefix), AWS_ENDPOINT_URL=proxy.address
        ) as client,
    ):
        load = ShopLoad(client, shop, orders_each=6, customers=CUSTOMERS)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            proxy.cut() if fault == "cut" else proxy.stall()
            time.sleep(OUTAGE)
            proxy.resume()
            resumed = time.time()
            worker_back = first_mail_after(tmp_path, resumed, WORK_RESUMES)
        mailed = seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
    print(
        f"sqs {fault}: {len(load.placed)} orders, first e-mail {worker_back:.2f} s after the"
        f" return, every e-mail {mailed:.1f} s after the load"
    )
    assert all(answer.ok for answer in load.answers)
    check_shop(
        own_database, tmp_path, load.placed, stock_before=stock, max_duplicates=EMAIL_CONCURRENCY
    )
    assert sqs_dead_letters(sqs, urls.values()) == 0
