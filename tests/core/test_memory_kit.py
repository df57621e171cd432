"""The in-memory kit keeps the database's rules: uniqueness, rollback, outbox on commit only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.errors import JobTooLarge
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.shop.errors import AlreadyNotified, DuplicateIdempotencyKey
from skincare_core.shop.models import (
    CartLine,
    InvoiceRecord,
    NewOrder,
    NotificationType,
    OrderItem,
    OrderStatus,
    PaymentEvent,
)
from skincare_core.testing.jobs import InMemoryQueue, InMemoryQueues
from skincare_core.testing.shop import InMemoryDatabase

pytestmark = pytest.mark.anyio
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def new_order(key: str = "k") -> NewOrder:
    return NewOrder(1, key, f"SKN-{key}", (OrderItem(5, "Serum", 2, 1_000),), WHEN)


def with_user(order: NewOrder, user_id: int) -> NewOrder:
    return NewOrder(user_id, order.idempotency_key, order.order_number, order.items, WHEN)


def fresh() -> tuple[InMemoryDatabase, InMemoryQueue]:
    queue = InMemoryQueue(wait=timedelta(0))
    return InMemoryDatabase(outbox_sink=queue), queue


async def test_an_idempotency_key_is_unique_per_user() -> None:
    db, _ = fresh()
    async with db() as uow:
        order = await uow.orders.add(new_order())
        assert order.total_rupiah == 2_000
        assert await uow.orders.add(with_user(new_order(), 2)) != order
        with pytest.raises(DuplicateIdempotencyKey):
            await uow.orders.add(new_order())
    assert len(db.state.orders) == 2


async def write_then_fail(db: InMemoryDatabase) -> None:
    async with db() as uow:
        await uow.orders.add(new_order())
        await uow.outbox.add(new_job("t"))
        raise RuntimeError("rollback")


async def test_a_rolled_back_unit_of_work_leaves_nothing_and_sends_no_job() -> None:
    db, queue = fresh()
    with pytest.raises(RuntimeError):
        await write_then_fail(db)
    assert (db.state.orders, queue.jobs(), db.commits) == ({}, [], 0)
    job = new_job("t")
    async with db() as uow:
        await uow.outbox.add(job)
    assert (queue.jobs(), db.commits) == ([job], 1)


async def test_the_outbox_routes_delays_and_keys_jobs_at_commit_only() -> None:
    queues = InMemoryQueues(wait=timedelta(0))
    db = InMemoryDatabase(outbox_sink=queues, routes=QueueRoutes({"pay": "critical"}))
    pay, later, mail = new_job("pay"), new_job("mail"), new_job("mail")
    async with db() as uow:
        assert await uow.outbox.add(pay, unique_key="order-1") is True
        assert await uow.outbox.add(new_job("pay"), unique_key="order-1") is False
        assert await uow.outbox.add(later, delay=timedelta(hours=1)) is True
        assert await uow.outbox.add(mail, not_before=datetime.now(UTC)) is True
        with pytest.raises(ValueError, match="not both"):
            await uow.outbox.add(mail, delay=timedelta(1), not_before=datetime.now(UTC))
        assert queues.queue("critical").depth == 0
    assert queues.queue("critical").jobs() == [pay]
    assert queues.queue("default").jobs() == [later, mail]
    assert [m.job for m in await queues.queue("default").receive(10)] == [mail]
    async with db() as uow:
        assert await uow.outbox.add(new_job("pay"), unique_key="order-1") is False


async def test_the_outbox_refuses_a_job_too_large_at_once() -> None:
    db, _ = fresh()
    async with db() as uow:
        with pytest.raises(JobTooLarge):
            await uow.outbox.add(Job("j", "t", {"x": "a" * 300_000}))


async def test_stock_never_goes_below_zero() -> None:
    db, _ = fresh()
    product = db.add_product("S", "Serum", 1_000, 1)
    user = db.add_user("s@example.test")
    async with db() as uow:
        with pytest.raises(ValueError, match="negative"):
            await uow.carts.check_out(user.id, [CartLine(product, 2)])
        await uow.carts.check_out(user.id, [CartLine(product, 1)])
    assert db.state.products[product.id].stock == 0


async def test_one_notification_per_order_and_type() -> None:
    db, _ = fresh()
    async with db() as uow:
        await uow.notifications.mark_notified(1, NotificationType.ORDER_CONFIRMATION, WHEN)
        await uow.notifications.mark_notified(1, NotificationType.PAYMENT_RECEIVED, WHEN)
        with pytest.raises(AlreadyNotified):
            await uow.notifications.mark_notified(1, NotificationType.ORDER_CONFIRMATION, WHEN)
        assert await uow.notifications.is_notified(1, NotificationType.ORDER_CONFIRMATION)
        assert not await uow.notifications.is_notified(2, NotificationType.ORDER_CONFIRMATION)


async def test_payment_events_are_unique_and_orders_move_only_from_pending() -> None:
    db, _ = fresh()
    async with db() as uow:
        order = await uow.orders.add(new_order())
        assert await uow.payments.add_event(PaymentEvent("e", order.id, "paid", 2_000))
        assert not await uow.payments.add_event(PaymentEvent("e", order.id, "paid", 9))
        assert await uow.orders.mark_paid(order.id)
        assert not await uow.orders.mark_paid(order.id)
    assert db.state.payments["e"].amount_rupiah == 2_000
    assert db.state.orders[order.id].status is OrderStatus.PAID


async def test_a_second_invoice_record_is_a_no_op() -> None:
    db, _ = fresh()
    first = InvoiceRecord(1, "a.pdf", WHEN)
    async with db() as uow:
        await uow.invoices.add(first)
        await uow.invoices.add(InvoiceRecord(1, "b.pdf", WHEN))
        assert await uow.invoices.get(1) == first


async def test_max_receives_dead_letters_a_job_received_too_often() -> None:
    now = [0.0]
    queue = InMemoryQueue(
        visibility_timeout=timedelta(seconds=1),
        wait=timedelta(0),
        max_receives=2,
        monotonic=lambda: now[0],
    )
    job = new_job("t")
    await enqueue_job(queue, job)
    for attempts in (1, 2):
        [message] = await queue.receive(1)
        assert message.attempts == attempts
        now[0] += 2
    assert await queue.receive(1) == []
    [dead] = await queue.list()
    assert (dead.job, dead.attempts, dead.error) == (job, 2, "received 2 times (max_receives)")
