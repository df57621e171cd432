"""Jobs the release before typed definitions wrote (integers as strings) still run after an
upgrade: old-form rows drained by the shop's handlers on their definitions, on Postgres."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job
from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.testing.shop import (
    InMemoryInvoiceStore,
    ManualClock,
    RecordingEmailService,
    TextInvoiceRenderer,
)
from skincare_postgres import PostgresDatabase, PostgresQueue
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio


async def test_old_form_rows_run_with_the_new_code(
    db: PostgresDatabase, queue: PostgresQueue, shop: Shop, engine: AsyncEngine
) -> None:
    user, product = await shop.user(), await shop.product(price=75_000)
    await shop.cart(user, product, 1)
    clock, email, store = ManualClock(), RecordingEmailService(), InMemoryInvoiceStore()
    order = await CheckoutService(uow=db, clock=clock).checkout(user.id, "k")
    # Replace the jobs the checkout wrote with rows as the previous release wrote them.
    async with engine.begin() as connection:
        await connection.execute(text("DELETE FROM jobs"))
    poll = timedelta(seconds=0.2)
    async with PostgresQueue(engine, name="bulk", poll_interval=poll) as bulk:
        await queue.enqueue(_old("send_confirmation_email", order.id, "default"))
        await bulk.enqueue(_old("generate_invoice_pdf", order.id, "bulk"))
        body = await shop.scalar("SELECT body FROM jobs WHERE type = 'send_confirmation_email'")
        assert f'"order_id":"{order.id}"' in str(body)
        router = build_router(
            uow=db, email=email, renderer=TextInvoiceRenderer(), store=store, clock=clock
        )
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for each in (queue, bulk):
                    tg.start_soon(Worker(queue=each, router=router).run)
                while await shop.scalar("SELECT count(*) FROM jobs") != 0:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
    assert [(m.kind, m.to) for m in email.sent] == [("order_confirmation", user.email)]
    assert len(store.files) == 1
    assert await shop.scalar("SELECT count(*) FROM order_notifications") == 1


def _old(job_type: str, order_id: int, queue: str) -> Envelope:
    return Envelope(Job(f"old-{job_type}", job_type, {"order_id": str(order_id)}), queue)
