"""The invariants every fault test of the shop checks, read from the database, the maildir and
the answers the customers got.

- every order answered 201 is stored, and nothing else: one order per (customer, key);
- no partial order: each has its items, and the stock went down by exactly what they hold;
- no committed order without its e-mails, eventually: its confirmation and payment-received
  e-mails reach the maildir (and its invoice the invoice directory) within a stated time;
- no double payment: one payment row per order however often its event came, paid once;
- duplicate e-mails bounded as documented: only a send cut off before its record (a process
  killed mid-send, or the database lost between send and record) repeats, once;
- no dead job: a fault is retried through, never dead-lettered (jobs table, SQS DLQs);
- during an outage no 5xx but 503, and every 503 carries Retry-After.
"""

from __future__ import annotations

import email
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, LiteralString

import psycopg
from attrs import frozen
from psycopg.rows import TupleRow

from skincare_postgres.engine import libpq_conninfo
from skincare_sqs import QueueUrls
from tests.e2e.e2e_client import pdf_count

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

CONFIRMATION = "order_confirmation"
_ITEMLESS = (
    "SELECT count(*) FROM orders o"
    " WHERE NOT EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id)"
)
PAYMENT_RECEIVED = "payment_received"


@frozen
class PlacedOrder:
    """An order the API answered 201 for: whose, under which key, and its id."""

    user_id: int
    key: str
    order_id: int


@frozen
class Answer:
    """One HTTP answer: what was asked, when it was sent and answered (monotonic), its status."""

    what: str
    sent: float
    answered: float
    status: int
    retry_after: str | None

    @property
    def ok(self) -> bool:
        """A 2xx."""
        return 200 <= self.status < 300


def check_answers(answers: Iterable[Answer]) -> None:
    """No 5xx but 503, and each 503 says when to retry (a positive number of seconds)."""
    statuses = Counter(a.status for a in answers)
    assert all(s < 500 or s == 503 for s in statuses), statuses
    waits = {a.retry_after for a in answers if a.status == 503}
    assert all(w is not None and w.isdigit() and int(w) > 0 for w in waits), waits


def mail_per_order(home: Path) -> Counter[tuple[str, str]]:
    """How many e-mails of each kind each order number got in the maildir."""
    seen: Counter[tuple[str, str]] = Counter()
    for path in (home / "mail").glob("*/*"):
        if path.parent.name == "tmp" or not path.is_file():
            continue
        message = email.message_from_bytes(path.read_bytes())
        seen[(str(message["X-Skincare-Order"]), str(message["X-Skincare-Notification"]))] += 1
    return seen


def order_numbers(url: str) -> dict[int, str]:
    """Every committed order's id and number."""
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        return {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, order_number FROM orders")}


def first_mail_after(home: Path, since: float, within: float) -> float:
    """Seconds from `since` (wall clock) to the first e-mail written after it: when the worker
    had work done again. AssertionError if none came within `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        mails = [p for p in (home / "mail").glob("new/*") if p.stat().st_mtime >= since]
        if mails:
            return min(p.stat().st_mtime for p in mails) - since
        assert time.monotonic() < deadline, f"no e-mail within {within} s"
        time.sleep(0.05)


def seconds_until_mailed(url: str, home: Path, within: float) -> float:
    """Seconds until every committed order has both its e-mails and its invoice; AssertionError
    naming what is missing after `within` seconds."""
    started = time.monotonic()
    while True:
        numbers = order_numbers(url).values()
        mail = mail_per_order(home)
        kinds = (CONFIRMATION, PAYMENT_RECEIVED)
        missing = [(n, kind) for n in numbers for kind in kinds if not mail[n, kind]]
        if not missing and pdf_count(home) >= len(numbers):
            return time.monotonic() - started
        assert time.monotonic() - started < within, (missing[:5], len(missing), pdf_count(home))
        time.sleep(0.2)


def check_shop(
    url: str, home: Path, placed: Iterable[PlacedOrder], *, stock_before: int, max_duplicates: int
) -> None:
    """The stored state after the load and the fault (see the module's list)."""
    expected = {p.order_id for p in placed}
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        orders = order_numbers(url)
        itemless = _count(conn, _ITEMLESS)
        stock = _count(conn, "SELECT sum(stock) FROM products")
        sold = _count(conn, "SELECT coalesce(sum(quantity), 0) FROM order_items")
        payments = Counter(
            (int(r[0]), str(r[1])) for r in conn.execute("SELECT order_id, status FROM payments")
        )
        unpaid = _count(conn, "SELECT count(*) FROM orders WHERE status <> 'paid'")
        dead = _count(conn, "SELECT count(*) FROM jobs WHERE status = 'dead'")
    assert set(orders) == expected, (len(orders), len(expected))
    assert itemless == 0
    assert stock + sold == stock_before, (stock, sold, stock_before)
    assert payments == Counter((order_id, "paid") for order_id in orders), payments.most_common(3)
    assert unpaid == 0
    assert dead == 0
    _check_mail(home, set(orders.values()), max_duplicates)


def _check_mail(home: Path, numbers: set[str], max_duplicates: int) -> None:
    mail = mail_per_order(home)
    assert {number for number, _ in mail} <= numbers
    duplicates = sum(count - 1 for count in mail.values())
    assert duplicates <= max_duplicates, mail.most_common(3)
    assert max(mail.values(), default=1) <= 2, mail.most_common(3)


def total_stock(url: str) -> int:
    """The catalogue's stock, all products together."""
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        return _count(conn, "SELECT sum(stock) FROM products")


def _count(conn: psycopg.Connection[TupleRow], sql: LiteralString) -> int:
    row = conn.execute(sql).fetchone()
    return int(str(row[0])) if row is not None and row[0] is not None else 0


def sqs_dead_letters(client: SQSClient, urls: Iterable[QueueUrls]) -> int:
    """Messages in the DLQs of `urls` (the worker's, or SQS's after maxReceiveCount)."""
    total = 0
    for queue in urls:
        attributes = client.get_queue_attributes(
            QueueUrl=queue.dlq_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        total += sum(int(count) for count in attributes.values())
    return total
