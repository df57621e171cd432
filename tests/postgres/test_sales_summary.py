"""The day's sales query and the summary's send claim on real PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import anyio
import pytest

from skincare_core.jobs.errors import RetryLater
from skincare_core.jobs.job import new_job
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import PaymentHandler, SalesSummaryHandler
from skincare_core.shop.job_types import DAILY_SALES_SUMMARY_JOB, PAYMENT_JOB, PROCESS_PAYMENT
from skincare_core.shop.models import DailySales, Order, PaymentEvent, Product, ProductSales
from skincare_core.shop.sales import day_before
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.shop import ManualClock, RecordingEmailService
from skincare_postgres import PostgresDatabase
from tests.core.core_kit import run_as_worker
from tests.core.sales_kit import summary_job
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio
TICK = datetime(2026, 12, 4, 7, tzinfo=ZoneInfo("Asia/Jakarta")).astimezone(UTC)
DAY = day_before(TICK)  # 3 December in Jakarta: 2 December 17:00 to 3 December 17:00 UTC


class Seller:
    """Checks out carts and applies their payments at chosen times, through the shop's code."""

    def __init__(self, db: PostgresDatabase, shop: Shop) -> None:
        self.db, self.shop = db, shop
        self.clock = ManualClock(DAY.start - timedelta(hours=1))

    async def pay(self, order: Order, at: datetime, event_id: str = "") -> None:
        """A payment event for `order`, applied at `at`."""
        event_id = event_id or f"evt-{order.id}"
        event = PaymentEvent(event_id, order.id, "paid", order.total_rupiah)
        assert await PaymentWebhookService(uow=self.db).receive(event)
        self.clock.advance(at - self.clock.now())
        handler = run_as_worker(PAYMENT_JOB, PaymentHandler(uow=self.db, clock=self.clock))
        await handler(new_job(PROCESS_PAYMENT, event_id=event_id))

    async def sell(self, lines: Sequence[tuple[Product, int]], paid_at: datetime | None) -> Order:
        """A new customer's order of `lines`, paid at `paid_at` (None: left pending)."""
        user = await self.shop.user()
        for product, quantity in lines:
            await self.shop.cart(user, product, quantity)
        order = await CheckoutService(uow=self.db, clock=self.clock).checkout(user.id, "k")
        if paid_at is not None:
            await self.pay(order, paid_at)
        return order


async def sales_of_day(db: PostgresDatabase, top: int = 5) -> DailySales:
    async with db() as uow:
        return await uow.sales.of_day(DAY, top=top)


async def test_paid_orders_of_the_jakarta_day_by_payment_time(
    db: PostgresDatabase, shop: Shop
) -> None:
    seller = Seller(db, shop)
    serum = await shop.product(price=100_000, stock=100)
    await seller.sell([(serum, 1)], DAY.start - timedelta(seconds=1))
    await seller.sell([(serum, 2)], DAY.start)
    await seller.sell([(serum, 3)], DAY.end - timedelta(microseconds=1))
    await seller.sell([(serum, 4)], DAY.end)
    await seller.sell([(serum, 5)], None)  # pending: no money yet
    sales = await sales_of_day(db)
    assert sales == DailySales(
        date(2026, 12, 3), 2, 500_000, (ProductSales(serum.id, serum.name, 5, 500_000),)
    )


async def test_top_products_by_quantity_ties_by_id_at_most_top(
    db: PostgresDatabase, shop: Shop
) -> None:
    seller = Seller(db, shop)
    items = [await shop.product(price=10_000 * (n + 1), stock=100) for n in range(4)]
    noon = DAY.start + timedelta(hours=5)
    await seller.sell([(items[0], 1), (items[1], 3), (items[2], 2)], noon)
    await seller.sell([(items[3], 3), (items[2], 1)], noon)
    sales = await sales_of_day(db, top=3)
    assert [(p.product_id, p.quantity, p.revenue_rupiah) for p in sales.top_products] == [
        (items[1].id, 3, 60_000),
        (items[2].id, 3, 90_000),
        (items[3].id, 3, 120_000),
    ]
    assert (sales.orders, sales.revenue_rupiah) == (2, 280_000)


async def test_an_order_counts_once_on_the_day_of_its_first_payment(
    db: PostgresDatabase, shop: Shop
) -> None:
    seller = Seller(db, shop)
    order = await seller.sell(
        [(await shop.product(price=70_000), 1)], DAY.start - timedelta(hours=1)
    )
    # A second event for the paid order is applied on the reported day; the order is not sold again.
    await seller.pay(order, DAY.start + timedelta(hours=1), event_id="evt-again")
    assert await shop.scalar("SELECT count(*) FROM payments WHERE paid_at IS NOT NULL") == 2
    assert await sales_of_day(db) == DailySales(date(2026, 12, 3), 0, 0, ())


async def test_concurrent_summary_runs_send_once_and_record_it(
    db: PostgresDatabase, shop: Shop
) -> None:
    seller = Seller(db, shop)
    await seller.sell([(await shop.product(price=25_000), 2)], DAY.start + timedelta(hours=2))
    email = RecordingEmailService(delay=0.2)
    # A lease shorter than the send, so the sender renews its claim meanwhile.
    handler = run_as_worker(
        DAILY_SALES_SUMMARY_JOB,
        SalesSummaryHandler(
            uow=db,
            email=email,
            clock=seller.clock,
            to="admin@toko.test",
            lease=timedelta(seconds=0.15),
        ),
    )
    retried: list[RetryLater] = []

    async def deliver() -> None:
        try:
            await handler(summary_job(TICK))
        except RetryLater as error:
            retried.append(error)

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(deliver)
    [mail] = email.summaries
    assert (mail.to, mail.data.sales.orders, mail.data.sales.revenue_rupiah) == (
        "admin@toko.test",
        1,
        50_000,
    )
    assert len(retried) == 4
    await handler(summary_job(TICK))  # a retry finds it recorded
    assert len(email.summaries) == 1
    sent = "SELECT report_key FROM report_notifications WHERE sent_at IS NOT NULL"
    assert await shop.scalar(sent) == "send_daily_sales_summary:2026-12-03"
