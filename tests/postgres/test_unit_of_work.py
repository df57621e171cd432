"""Repositories and the unit of work on a real server: state after commit, rollback, uniqueness."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import text

from skincare_core.jobs.errors import JobTooLarge
from skincare_core.jobs.job import new_job
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.errors import AlreadyNotified, CartEmpty, OutOfStock
from skincare_core.shop.job_types import SEND_CONFIRMATION_EMAIL
from skincare_core.shop.models import InvoiceRecord, NotificationType, OrderStatus, PaymentEvent
from skincare_core.testing.shop import ManualClock
from skincare_postgres import PostgresDatabase
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


async def test_checkout_writes_order_items_stock_cart_and_job(
    db: PostgresDatabase, shop: Shop
) -> None:
    user, product = await shop.user(), await shop.product(price=120_000, stock=3)
    await shop.cart(user, product, 2)
    order = await CheckoutService(uow=db, clock=ManualClock()).checkout(user.id, "k1")
    async with db() as uow:
        stored = await uow.orders.get(order.id)
        assert stored == order
        assert (await uow.products.get(product.id)) is not None
        assert [p.stock for p in await uow.products.list()] == [1]
        assert await uow.carts.lines(user.id) == []
    assert order.total_rupiah == 240_000
    assert order.items[0].unit_price_rupiah == 120_000
    body = await shop.scalar(f"SELECT body FROM jobs WHERE type = '{SEND_CONFIRMATION_EMAIL}'")
    assert f'"order_id":{order.id}' in str(body)


async def test_empty_cart_and_missing_stock_write_nothing(db: PostgresDatabase, shop: Shop) -> None:
    user, product = await shop.user(), await shop.product(stock=1)
    checkout = CheckoutService(uow=db, clock=ManualClock())
    with pytest.raises(CartEmpty):
        await checkout.checkout(user.id, "k")
    await shop.cart(user, product, 2)
    with pytest.raises(OutOfStock):
        await checkout.checkout(user.id, "k")
    assert await shop.scalar("SELECT count(*) FROM orders") == 0
    assert await shop.scalar("SELECT count(*) FROM jobs") == 0
    assert await shop.scalar("SELECT stock FROM products") == 1


async def test_failure_after_the_order_insert_rolls_everything_back(
    db: PostgresDatabase, shop: Shop
) -> None:
    user, product = await shop.user(), await shop.product(stock=5)
    await shop.cart(user, product, 1)
    # A trigger fails the stock update, which runs after the order and its items are written.
    async with db.engine.begin() as conn:
        await conn.execute(text(_FAIL_STOCK_UPDATE))
    try:
        with pytest.raises(psycopg.Error, match="stock update refused"):
            await CheckoutService(uow=db, clock=ManualClock()).checkout(user.id, "k")
    finally:
        async with db.engine.begin() as conn:
            await conn.execute(text("DROP TRIGGER refuse_stock ON products"))
    assert await shop.scalar("SELECT count(*) FROM orders") == 0
    assert await shop.scalar("SELECT count(*) FROM order_items") == 0
    assert await shop.scalar("SELECT count(*) FROM jobs") == 0
    assert await shop.scalar("SELECT stock FROM products") == 5
    assert await shop.scalar("SELECT count(*) FROM cart_items") == 1


_FAIL_STOCK_UPDATE = """
CREATE OR REPLACE FUNCTION refuse_stock() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RAISE EXCEPTION 'stock update refused'; END $$;
CREATE TRIGGER refuse_stock BEFORE UPDATE ON products FOR EACH ROW EXECUTE FUNCTION refuse_stock();
"""


async def test_error_inside_the_unit_of_work_leaves_no_job(
    db: PostgresDatabase, shop: Shop
) -> None:
    async def add_then_fail() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("t"))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await add_then_fail()
    assert await shop.scalar("SELECT count(*) FROM jobs") == 0


async def test_outbox_refuses_a_too_large_job(db: PostgresDatabase, shop: Shop) -> None:
    with pytest.raises(JobTooLarge):
        async with db() as uow:
            await uow.outbox.add(new_job("t", blob="x" * 300_000))
    assert await shop.scalar("SELECT count(*) FROM jobs") == 0


async def test_mark_notified_twice_raises_and_the_transaction_stays_usable(
    db: PostgresDatabase, shop: Shop
) -> None:
    order_id = await _order(db, shop)
    kind = NotificationType.ORDER_CONFIRMATION
    async with db() as uow:
        assert not await uow.notifications.is_notified(order_id, kind)
        await uow.notifications.mark_notified(order_id, kind, NOW)
        with pytest.raises(AlreadyNotified):
            await uow.notifications.mark_notified(order_id, kind, NOW)
        await uow.notifications.mark_notified(order_id, NotificationType.PAYMENT_RECEIVED, NOW)
    async with db() as uow:
        assert await uow.notifications.is_notified(order_id, kind)
    assert await shop.scalar("SELECT count(*) FROM order_notifications") == 2


async def test_payments_invoices_and_order_transitions(db: PostgresDatabase, shop: Shop) -> None:
    order_id = await _order(db, shop)
    event = PaymentEvent("evt-1", order_id, "paid", 150_000)
    async with db() as uow:
        assert await uow.payments.add_event(event) is True
        assert await uow.payments.add_event(event) is False
        await uow.payments.mark_paid("evt-1", NOW)
        assert await uow.orders.mark_paid(order_id) is True
        assert await uow.orders.mark_paid(order_id) is False
        record = InvoiceRecord(order_id, "invoices/x.pdf", NOW)
        await uow.invoices.add(record)
        await uow.invoices.add(InvoiceRecord(order_id, "invoices/other.pdf", NOW))
    async with db() as uow:
        payment = await uow.payments.get("evt-1", for_update=True)
        order = await uow.orders.get(order_id, for_update=True)
        assert await uow.invoices.get(order_id) == record
        assert await uow.payments.get("missing") is None
        assert await uow.orders.get(999_999) is None
    assert payment is not None
    assert (payment.status.value, payment.paid_at) == ("paid", NOW)
    assert order is not None
    assert order.status is OrderStatus.PAID


async def test_cart_quantity_set_changed_and_removed(db: PostgresDatabase, shop: Shop) -> None:
    user, product = await shop.user(), await shop.product()
    async with db() as uow:
        await uow.carts.set_quantity(user.id, product.id, 2)
        await uow.carts.set_quantity(user.id, product.id, 3)
        assert [line.quantity for line in await uow.carts.lines(user.id)] == [3]
        await uow.carts.set_quantity(user.id, product.id, 0)
        assert await uow.carts.lines(user.id) == []
        assert await uow.users.get(user.id) == user
        assert await uow.users.get(999_999) is None


async def _order(db: PostgresDatabase, shop: Shop) -> int:
    user, product = await shop.user(), await shop.product(price=150_000)
    await shop.cart(user, product, 1)
    return (await CheckoutService(uow=db, clock=ManualClock()).checkout(user.id, "k")).id
