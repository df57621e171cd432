"""The real API and worker processes reach PostgreSQL through a proxy that stalls the link
(connections accepted, nothing answered) for STALL seconds in the middle of a bounded shop load
(8 customers, up to 8 orders each: cart, checkout, a paid webhook delivered twice), with short
database timeouts: SKINCARE_DATABASE_CONNECT_TIMEOUT_SECONDS=1 and
SKINCARE_DATABASE_STATEMENT_TIMEOUT_SECONDS=2, so the client gives up after DEADLINE = 3 s.

Invariants (`shop_invariants`) as after a cut, and: every answer, during the stall or not,
within ANSWERED_WITHIN s; an order read during the stall answers 503 problem+json with
Retry-After; the worker logs a line whose error is DatabaseUnavailable (a job's retry, a failed
receive or settle) within NOTICED_WITHIN s of the stall's start; a checkout answers 201 within
RECOVERY s and the worker sends an e-mail within WORK_RESUMES s of the link's return.
Connections the stall silenced stay silent after it (a hung server's requests are lost), so a
pooled connection found silent after the return costs its request one deadline and a 503.

With the default timeouts (5 s + 30 s) the same stall fails it: answers take up to 35 s and
the worker logs nothing within NOTICED_WITHIN s.

Measured (7 runs): 24 answers 503, the slowest answer 3.00-3.01 s, the worker's first
DatabaseUnavailable line 2.0-3.0 s after the stall's start (the last 3 runs), 201 again
0.33-0.38 s and the first e-mail 1.0-4.7 s after the return, every e-mail 0.9-6.0 s after the
load; the default timeouts time the client out (30 s) on the first read during the stall.
`queue.receive_failed` alone came 5.0 s after the start (an idle worker's 1 s wait, a claim,
its retry on a new connection), and in a run beside other tests not at all: that retry went
out after the return and succeeded.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from skincare_services.local import wait_for
from tests.e2e.e2e_client import ShopClient, log_records
from tests.faults.conftest import through, upstream_of
from tests.faults.shop_invariants import (
    PlacedOrder,
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

QUICK = {
    "SKINCARE_DATABASE_CONNECT_TIMEOUT_SECONDS": "1",
    "SKINCARE_DATABASE_STATEMENT_TIMEOUT_SECONDS": "2",
}
DEADLINE = 3.0
STALL = 6.0
"""Two deadlines: every worker's claim in the stall gives up at least once."""
ANSWERED_WITHIN = DEADLINE + 2.0
"""Any answer: the deadline, and a margin for a two-core machine shared by the suite."""
NOTICED_WITHIN = 10.0
RECOVERY = DEADLINE + 1.0
"""A checkout after the return may first meet a pooled connection the stall silenced."""
WORK_RESUMES = 2 * DEADLINE + 2.0
"""A claim, then a job's first statement, may each meet a connection the stall silenced."""
MAIL_WITHIN = 30.0
"""After the load. A send stalled between the e-mail and its record waits out its 15 s claim."""


def test_a_stalled_database_link_answers_503_within_the_deadline_and_loses_nothing(
    own_database: str, tmp_path: Path
) -> None:
    shop = seeded(own_database)
    stock = stock_of(own_database)
    with (
        TcpProxy(upstream_of(own_database)) as proxy,
        shop_processes(through(own_database, proxy.port), tmp_path, **QUICK) as client,
    ):
        load = ShopLoad(client, shop, orders_each=8, customers=CUSTOMERS)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            proxy.stall()
            stalled, stalled_at = time.monotonic(), time.time()
            reads = _reads_until(client, load.placed[0], stalled + STALL - ANSWERED_WITHIN)
            time.sleep(max(0.0, stalled + STALL - time.monotonic()))
            proxy.resume()
            resumed, resumed_at = time.monotonic(), time.time()
            worker_back = first_mail_after(tmp_path, resumed_at, WORK_RESUMES)
        mailed = seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
    noticed = _first_logged_after(tmp_path / "worker.log", stalled_at)
    recovery = load.first_success_after(resumed)
    slowest = max(a.answered - a.sent for a in load.answers)
    outage = [a for a in load.answers if a.status == 503]
    print(
        f"db stall: {len(load.placed)} orders, {len(outage)} x 503, slowest answer"
        f" {slowest:.2f} s, reads {[f'{s:.2f}' for s in reads]} s, worker noticed after"
        f" {noticed:.2f} s, 201 again after {recovery:.2f} s, first e-mail {worker_back:.2f} s"
        f" after the return, every e-mail {mailed:.1f} s after the load"
    )
    assert outage, "the stall never reached a request"
    check_answers(load.answers)
    assert slowest < ANSWERED_WITHIN
    assert noticed < NOTICED_WITHIN
    assert recovery < RECOVERY
    check_shop(
        own_database, tmp_path, load.placed, stock_before=stock, max_duplicates=EMAIL_CONCURRENCY
    )


def _reads_until(client: ShopClient, order: PlacedOrder, until: float) -> list[float]:
    """Read `order` again and again until `until` (monotonic), at least once: each answer must
    be a 503 problem+json with Retry-After within ANSWERED_WITHIN s; how long each took."""
    took = [_stalled_read(client, order)]
    while time.monotonic() < until:
        took.append(_stalled_read(client, order))
    return took


def _stalled_read(client: ShopClient, order: PlacedOrder) -> float:
    started = time.monotonic()
    url = f"/v1/orders/{order.order_id}"
    response = client.http.get(url, headers=client.auth_headers(order.user_id))
    seconds = time.monotonic() - started
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.headers.get("retry-after", "").isdigit(), response.headers
    assert seconds < ANSWERED_WITHIN
    return seconds


def _first_logged_after(log: Path, since: float) -> float:
    """Seconds from `since` (wall clock) to the first line of the JSON log `log` whose error is
    DatabaseUnavailable: a job's retry, or a failed receive or settle, whichever came first."""
    times = [
        datetime.fromisoformat(str(record["time"])).timestamp()
        for record in log_records(log)
        if "DatabaseUnavailable" in str(record.get("error", ""))
    ]
    later = [t - since for t in times if t >= since]
    assert later, f"nothing in {log} said the database was unavailable after the stall"
    return min(later)
