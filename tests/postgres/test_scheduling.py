"""Scheduling on Postgres beyond the contract: the outbox's delays, queues and unique keys in a
business transaction, and the shop's order expiry run by one worker per named queue."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.job import new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.shop.models import Order, PaymentEvent
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.shop import (
    InMemoryInvoiceStore,
    ManualClock,
    RecordingEmailService,
    TextInvoiceRenderer,
)
from skincare_postgres import PostgresDatabase, postgres_backend
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio


async def test_the_outbox_routes_delays_and_keys_in_the_transaction(
    engine: AsyncEngine, shop: Shop
) -> None:
    db = PostgresDatabase(engine, routes=SHOP_ROUTES)
    async with db() as uow:
        assert await uow.outbox.add(new_job("process_payment"), unique_key="evt-1") is True
        assert await uow.outbox.add(new_job("process_payment"), unique_key="evt-1") is False
        later = new_job("expire_unpaid_order")
        assert await uow.outbox.add(later, delay=timedelta(hours=2)) is True
        with pytest.raises(ValueError, match="not both"):
            await uow.outbox.add(later, delay=timedelta(1), not_before=ManualClock().now())
    rows = "SELECT string_agg(type || '@' || queue, ',' ORDER BY type) FROM jobs"
    assert await shop.scalar(rows) == "expire_unpaid_order@default,process_payment@critical"
    due = "SELECT available_at - now() > interval '119 minutes' FROM jobs WHERE queue = 'default'"
    assert await shop.scalar(due) is True


async def test_concurrent_transactions_adding_one_key_add_one_job(
    engine: AsyncEngine, shop: Shop
) -> None:
    db = PostgresDatabase(engine)
    added: list[bool] = []

    async def add(n: int) -> None:
        async with db() as uow:
            added.append(await uow.outbox.add(new_job("t", n=str(n)), unique_key="once"))

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(add, n)
    assert Counter(added) == {True: 1, False: 9}
    assert await shop.scalar("SELECT count(*) FROM jobs") == 1


async def test_a_rolled_back_key_is_free_again(engine: AsyncEngine, shop: Shop) -> None:
    db = PostgresDatabase(engine)

    async def add_then_fail() -> None:
        async with db() as uow:
            await uow.outbox.add(new_job("t"), unique_key="k")
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        await add_then_fail()
    async with db() as uow:
        assert await uow.outbox.add(new_job("t"), unique_key="k") is True
    assert await shop.scalar("SELECT count(*) FROM jobs") == 1


@asynccontextmanager
async def shop_workers(engine: AsyncEngine, router: Router) -> AsyncIterator[None]:
    """One Worker per shop queue, as `skincare-worker` runs them, for the body of the block."""
    async with (
        postgres_backend(
            engine, queues=SHOP_ROUTES.names, poll_interval=timedelta(seconds=0.2)
        ) as backend,
        anyio.create_task_group() as tg,
    ):
        for queue in backend.queues.values():
            tg.start_soon(Worker(queue=queue, router=router, concurrency=2).run)
        yield
        tg.cancel_scope.cancel()


async def until(shop: Shop, query: str, expected: object) -> None:
    with anyio.fail_after(15):
        while await shop.scalar(query) != expected:  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def place(db: PostgresDatabase, shop: Shop, window: timedelta) -> Order:
    user, product = await shop.user(), await shop.product(price=50_000, stock=10)
    await shop.cart(user, product, 2)
    checkout = CheckoutService(uow=db, clock=ManualClock(), payment_window=window)
    return await checkout.checkout(user.id, "k")


@pytest.mark.slow
async def test_an_unpaid_order_expires_and_a_late_payment_is_kept_and_dead_lettered(
    engine: AsyncEngine, shop: Shop
) -> None:
    db, clock = PostgresDatabase(engine, routes=SHOP_ROUTES), ManualClock()
    email, store = RecordingEmailService(), InMemoryInvoiceStore()
    router = build_router(
        uow=db, email=email, renderer=TextInvoiceRenderer(), store=store, clock=clock
    )
    order = await place(db, shop, window=timedelta(seconds=1))
    async with shop_workers(engine, router):
        await until(shop, "SELECT status FROM orders", "expired")
        assert await shop.scalar("SELECT stock FROM products") == 10
        event = PaymentEvent("evt-late", order.id, "paid", order.total_rupiah)
        assert await PaymentWebhookService(uow=db).receive(event) is True
        await until(shop, "SELECT count(*) FROM jobs WHERE status = 'dead'", 1)
    dead = "SELECT queue || ' ' || type || ' ' || last_error FROM jobs WHERE status = 'dead'"
    reason = await shop.scalar(dead)
    assert str(reason).startswith("critical process_payment PaymentForExpiredOrder: event")
    assert await shop.scalar("SELECT status || ' ' || (paid_at IS NULL) FROM payments") == (
        "pending true"
    )
    assert (await shop.scalar("SELECT status FROM orders"), len(email.sent)) == ("expired", 1)


@pytest.mark.slow
async def test_a_paid_order_is_left_alone_when_its_window_closes(
    engine: AsyncEngine, shop: Shop
) -> None:
    db, clock = PostgresDatabase(engine, routes=SHOP_ROUTES), ManualClock()
    router = build_router(
        uow=db,
        email=RecordingEmailService(),
        renderer=TextInvoiceRenderer(),
        store=InMemoryInvoiceStore(),
        clock=clock,
    )
    order = await place(db, shop, window=timedelta(seconds=2))
    event = PaymentEvent("evt", order.id, "paid", order.total_rupiah)
    await PaymentWebhookService(uow=db).receive(event)
    async with shop_workers(engine, router):
        await until(shop, "SELECT count(*) FROM invoices", 1)
        await until(shop, "SELECT count(*) FROM jobs", 0)
    assert await shop.scalar("SELECT status FROM orders") == "paid"
    assert await shop.scalar("SELECT stock FROM products") == 8
