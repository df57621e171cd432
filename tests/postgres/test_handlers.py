"""Core's handlers and worker, unchanged, on the Postgres unit of work and queue."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router, invoice_key
from skincare_core.shop.job_types import EXPIRE_UNPAID_ORDER
from skincare_core.shop.models import PaymentEvent
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.shop import (
    InMemoryInvoiceStore,
    ManualClock,
    RecordingEmailService,
    TextInvoiceRenderer,
)
from skincare_postgres import PostgresDatabase, PostgresQueue
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio


async def test_a_paid_order_gets_both_emails_and_an_invoice(
    db: PostgresDatabase, queue: PostgresQueue, shop: Shop, engine: AsyncEngine
) -> None:
    user, product = await shop.user(), await shop.product(price=75_000)
    await shop.cart(user, product, 2)
    clock, email, store = ManualClock(), RecordingEmailService(), InMemoryInvoiceStore()
    order = await CheckoutService(uow=db, clock=clock).checkout(user.id, "k")
    await PaymentWebhookService(uow=db).receive(PaymentEvent("evt", order.id, "paid", 150_000))
    router = build_router(
        uow=db, email=email, renderer=TextInvoiceRenderer(), store=store, clock=clock
    )
    poll = timedelta(seconds=0.5)
    # Each job type goes to its definition's queue: payments critical, invoices bulk.
    with anyio.fail_after(20):
        async with (
            PostgresQueue(engine, name="critical", poll_interval=poll) as critical,
            PostgresQueue(engine, name="bulk", poll_interval=poll) as bulk,
            anyio.create_task_group() as tg,
        ):
            for each in (queue, critical, bulk):
                tg.start_soon(Worker(queue=each, router=router).run)
            # The invoice is the last job in the chain checkout -> payment -> invoice.
            while await shop.scalar("SELECT count(*) FROM invoices") == 0:  # noqa: ASYNC110
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
    # The confirmation and the payment job run concurrently, so the two e-mails' order varies.
    assert sorted((m.kind, m.to) for m in email.sent) == [
        ("order_confirmation", user.email),
        ("payment_received", user.email),
    ]
    assert await shop.scalar("SELECT status FROM orders") == "paid"
    assert await shop.scalar("SELECT status FROM payments") == "paid"
    assert await shop.scalar("SELECT count(*) FROM order_notifications") == 2
    assert list(store.files) == [invoice_key(order.order_number)]
    # What is left is the order's expiry, due when its payment window closes.
    left = "SELECT type FROM jobs WHERE available_at > now() + interval '23 hours'"
    assert await shop.scalar(left) == EXPIRE_UNPAID_ORDER
    assert await shop.scalar("SELECT count(*) FROM jobs") == 1
