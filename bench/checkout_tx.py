"""The checkout-shaped transaction of bench.notify_commit, in its three ways of waking workers.

Each client has its own psycopg connection, user and product. A transaction locks the product,
inserts the order with its item (one statement, as the unit of work does), takes the stock and
adds the confirmation job (due now) and the expiry job (in 24 hours) to the jobs table, then
commits. The three variants differ only in the job inserts and what follows the commit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import LiteralString

import psycopg
from attrs import frozen

from skincare_core.jobs import Job, encode_job, new_job
from skincare_postgres import JOBS_CHANNEL, PostgresNotifier
from skincare_postgres.schema import queue_channel

CHANNEL = queue_channel(JOBS_CHANNEL, "default")
CONFIRMATION = "send_confirmation_email"

# The outbox's insert of a job in the order's transaction, the same columns and conflict rule as
# the Postgres outbox writer's: kept here so the program measures one fixed statement.
OUTBOX_ADD = """
INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
    COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s))
ON CONFLICT DO NOTHING RETURNING 1
"""
# The same insert, notifying inside the order's own transaction.
IN_TRANSACTION_ADD = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
    VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
        COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s))
    ON CONFLICT DO NOTHING RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM added
"""

_LOCK = "SELECT stock FROM products WHERE id = %(product)s FOR UPDATE"
_ORDER = """
WITH placed AS (
    INSERT INTO orders (order_number, user_id, status, payment_status, total_rupiah,
        idempotency_key, created_at, updated_at)
    VALUES (%(number)s, %(user)s, 'pending', 'unpaid', 150000, %(number)s, now(), now())
    RETURNING id),
items AS (
    INSERT INTO order_items (order_id, product_id, name, quantity, unit_price_rupiah)
    SELECT placed.id, %(product)s, 'Bench serum', 1, 150000 FROM placed)
SELECT id FROM placed
"""
_TAKE = "UPDATE products SET stock = stock - 1 WHERE id = %(product)s"


@frozen
class Variant:
    """How a transaction's jobs wake the worker: `add` is the job insert, `after` the notifier
    the committed transaction hands its channel to (None: nothing after the commit)."""

    label: str
    add: LiteralString
    after: Callable[[], PostgresNotifier | None]


def variants(notifier: PostgresNotifier) -> dict[str, Variant]:
    """The baseline (no NOTIFY anywhere), NOTIFY in the transaction, and the notifier after the
    commit, by short name."""
    return {
        "none": Variant("no NOTIFY", OUTBOX_ADD, lambda: None),
        "in_tx": Variant("NOTIFY in the transaction (main)", IN_TRANSACTION_ADD, lambda: None),
        "after": Variant("NOTIFY after commit (notifier)", OUTBOX_ADD, lambda: notifier),
    }


def _job_params(job: Job, delay: timedelta) -> dict[str, object]:
    return {
        "id": job.id,
        "type": job.type,
        "body": encode_job(job),
        "queue": "default",
        "key": None,
        "not_before": None,
        "delay": delay,
        "channel": CHANNEL,
    }


async def checkout(
    conn: psycopg.AsyncConnection[tuple[object, ...]], variant: Variant, user: int, product: int
) -> tuple[str, float]:
    """One checkout transaction; the confirmation job's id and when its commit returned."""
    params = {"product": product, "user": user, "number": uuid.uuid4().hex}
    await conn.execute(_LOCK, params)
    [(order_id,)] = await (await conn.execute(_ORDER, params)).fetchall()
    await conn.execute(_TAKE, params)
    confirmation = new_job(CONFIRMATION, order_id=str(order_id))
    expiry = new_job("expire_unpaid_order", order_id=str(order_id))
    await conn.execute(variant.add, _job_params(confirmation, timedelta(0)))
    await conn.execute(variant.add, _job_params(expiry, timedelta(hours=24)))
    await conn.commit()
    committed = time.perf_counter()
    if (notifier := variant.after()) is not None:
        notifier.wake([CHANNEL])
    return confirmation.id, committed
