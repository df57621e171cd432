"""Selling on the in-memory kit at chosen times, for the sales summary tests."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from skincare_core.jobs.job import Job
from skincare_core.jobs.scheduler import Schedules
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import PROCESS_PAYMENT
from skincare_core.shop.models import Order, PaymentEvent, Product
from skincare_core.shop.periodic import add_daily_sales_summary
from skincare_core.shop.webhooks import PaymentWebhookService
from tests.core.core_kit import Shop, make_shop

JAKARTA = ZoneInfo("Asia/Jakarta")
ADMIN = "admin@toko.example"


def wib(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    """A Jakarta wall-clock time (WIB, UTC+7), as an aware UTC datetime."""
    return datetime(year, month, day, hour, minute, second, tzinfo=JAKARTA).astimezone(UTC)


def summary_shop() -> Shop:
    """The in-memory kit whose router (and drain) serves the daily sales summary to ADMIN."""
    shop = make_shop()
    shop.router = shop.drain.handlers = build_router(
        uow=shop.db,
        email=shop.email,
        renderer=shop.renderer,
        store=shop.store,
        clock=shop.clock,
        admin_email=ADMIN,
    )
    return shop


def summary_job(tick: datetime) -> Job:
    """The job the shop's schedule enqueues for `tick`."""
    schedules = Schedules()
    add_daily_sales_summary(schedules)
    [schedule] = schedules.all
    return schedule.job(tick)


def product(shop: Shop, name: str, price: int) -> Product:
    """A product with plenty of stock."""
    return shop.db.add_product(f"SKU-{uuid.uuid4().hex[:6]}", name, price, 1000)


async def sell(
    shop: Shop, lines: Sequence[tuple[Product, int]], *, paid_at: datetime | None
) -> Order:
    """A new customer checks out `lines`; the payment is applied at `paid_at` (None: unpaid).
    The clock is left at `paid_at`; the checkout's jobs are discarded unrun, the payment's job
    and its follow-ups (its e-mail, the invoice) run."""
    user = shop.db.add_user(f"{uuid.uuid4().hex[:8]}@example.test")
    for item, quantity in lines:
        shop.db.state.carts[(user.id, item.id)] = quantity
    order = await CheckoutService(uow=shop.db, clock=shop.clock).checkout(user.id, "key")
    await shop.discard_jobs()
    if paid_at is not None:
        event = PaymentEvent(f"evt-{order.id}", order.id, "paid", order.total_rupiah)
        assert await PaymentWebhookService(uow=shop.db).receive(event)
        at_run(shop, paid_at)
        runs = await shop.drain.drain()
        assert runs[0].job.type == PROCESS_PAYMENT
        assert {run.outcome for run in runs} == {"done"}
    return order


def at_run(shop: Shop, moment: datetime) -> None:
    """Set the clock to `moment` (when the summary job runs)."""
    shop.clock.advance(moment - shop.clock.now())
