"""Races with real connections in parallel: each rule holds under concurrency."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.errors import OutOfStock
from skincare_core.shop.handlers import PaymentHandler
from skincare_core.shop.job_types import PAYMENT_JOB
from skincare_core.shop.models import Order, PaymentEvent
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.shop import ManualClock
from skincare_postgres import PostgresDatabase, PostgresQueue
from tests.core.core_kit import run_as_worker
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio


async def test_twenty_checkouts_with_one_key_place_one_order(
    db: PostgresDatabase, shop: Shop
) -> None:
    user, product = await shop.user(), await shop.product(stock=10)
    await shop.cart(user, product, 2)
    checkout = CheckoutService(uow=db, clock=ManualClock())
    orders: list[Order] = []

    async def place() -> None:
        orders.append(await checkout.checkout(user.id, "same-key"))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(place)
    assert len({order.id for order in orders}) == 1
    assert await shop.scalar("SELECT count(*) FROM orders") == 1
    assert await shop.scalar("SELECT stock FROM products") == 8
    # The order's confirmation and its expiry, once.
    assert await shop.scalar("SELECT count(*) FROM jobs") == 2


async def test_twenty_buyers_racing_for_five_units_sell_exactly_five(
    db: PostgresDatabase, shop: Shop
) -> None:
    product = await shop.product(stock=5)
    buyers = [await shop.user() for _ in range(20)]
    for buyer in buyers:
        await shop.cart(buyer, product, 1)
    checkout = CheckoutService(uow=db, clock=ManualClock())
    outcomes: list[str] = []

    async def buy(user_id: int) -> None:
        try:
            await checkout.checkout(user_id, "k")
            outcomes.append("sold")
        except OutOfStock:
            outcomes.append("out of stock")

    async with anyio.create_task_group() as tg:
        for buyer in buyers:
            tg.start_soon(buy, buyer.id)
    assert Counter(outcomes) == {"sold": 5, "out of stock": 15}
    assert await shop.scalar("SELECT stock FROM products") == 0
    assert await shop.scalar("SELECT count(*) FROM orders") == 5
    assert await shop.scalar("SELECT count(*) FROM jobs") == 2 * 5


async def test_fifty_deliveries_of_one_event_store_one_payment_and_one_job(
    db: PostgresDatabase, shop: Shop
) -> None:
    user, product = await shop.user(), await shop.product(price=99_000)
    await shop.cart(user, product, 1)
    order = await CheckoutService(uow=db, clock=ManualClock()).checkout(user.id, "k")
    webhooks = PaymentWebhookService(uow=db)
    event = PaymentEvent("evt-race", order.id, "paid", 99_000)
    answers: list[bool] = []

    async def deliver() -> None:
        answers.append(await webhooks.receive(event))

    async with anyio.create_task_group() as tg:
        for _ in range(50):
            tg.start_soon(deliver)
    assert Counter(answers) == {False: 49, True: 1}
    assert await shop.scalar("SELECT count(*) FROM payments") == 1
    assert await shop.scalar("SELECT count(*) FROM jobs WHERE type = 'process_payment'") == 1

    job = Job("j", "process_payment", {"event_id": "evt-race"})
    handler = run_as_worker(PAYMENT_JOB, PaymentHandler(uow=db, clock=ManualClock()))
    async with anyio.create_task_group() as tg:
        tg.start_soon(handler, job)
        tg.start_soon(handler, job)
    assert await shop.scalar("SELECT status FROM orders") == "paid"
    follow_ups = "SELECT count(*) FROM jobs WHERE type IN ('send_payment_received_email', %s)"
    assert await shop.scalar(follow_ups % "'generate_invoice_pdf'") == 2


@pytest.mark.slow
async def test_two_workers_process_every_job_exactly_once(engine: AsyncEngine, shop: Shop) -> None:
    total = 4_000
    async with PostgresQueue(engine) as producer:
        jobs = [new_job("count", n=str(n)) for n in range(total)]
        await producer.enqueue_many([Envelope(job) for job in jobs])
    seen: Counter[str] = Counter()
    by_worker: Counter[int] = Counter()
    all_seen = anyio.Event()

    def handler(worker: int) -> Router:
        async def record(job: Job) -> None:
            seen[job.id] += 1
            by_worker[worker] += 1
            if len(seen) == total:
                all_seen.set()

        router = Router()
        router.register("count", record)
        return router

    queues = [PostgresQueue(engine, poll_interval=timedelta(seconds=0.2)) for _ in range(2)]
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for index, queue in enumerate(queues):
                tg.start_soon(Worker(queue=queue, router=handler(index), concurrency=16).run)
            await all_seen.wait()
            # Cancelling lets in-flight jobs finish and be acked before the workers return.
            tg.cancel_scope.cancel()
    for queue in queues:
        await queue.aclose()
    assert len(seen) == total
    assert set(seen.values()) == {1}
    assert min(by_worker.values()) > 0
    assert await shop.scalar("SELECT count(*) FROM jobs") == 0
