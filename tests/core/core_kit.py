"""The in-memory shop kit wired together, shared by the core tests (a uniquely named module)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import TypeVar

import anyio
import attrs

from skincare_core.jobs.definitions import JobDefinition
from skincare_core.jobs.job import Job
from skincare_core.jobs.router import Router
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import EXPIRE_UNPAID_ORDER
from skincare_core.shop.models import Order
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import (
    InMemoryDatabase,
    InMemoryInvoiceStore,
    ManualClock,
    RecordingEmailService,
    TextInvoiceRenderer,
)


@attrs.define
class Shop:
    """The in-memory kit wired together, as the worker service wires the real one."""

    queue: InMemoryQueue
    db: InMemoryDatabase
    email: RecordingEmailService
    clock: ManualClock
    store: InMemoryInvoiceStore
    renderer: TextInvoiceRenderer
    router: Router

    async def place_order(self, quantity: int = 2, price: int = 50_000) -> Order:
        """A user with one product in the cart checks out; the queue is emptied afterwards (the
        confirmation acked, the order's expiry, due a day later, cancelled)."""
        user = self.db.add_user(f"user{self.db.state.next_id}@example.com")
        product = self.db.add_product(f"SKU{self.db.state.next_id}", "Serum", price, 10)
        self.db.state.carts[(user.id, product.id)] = quantity
        order = await CheckoutService(uow=self.db, clock=self.clock).checkout(user.id, "key")
        while messages := await self.queue.receive(10):
            for message in messages:
                await self.queue.ack_many([message])
        for job in self.queue.jobs():
            assert job.type == EXPIRE_UNPAID_ORDER
            assert await self.queue.cancel(job.id) is True
        return order


def make_shop() -> Shop:
    """A fresh kit: a queue that never waits, the database, fakes, and the shop's router."""
    queue = InMemoryQueue(wait=timedelta(0))
    db = InMemoryDatabase(outbox_sink=queue)
    email = RecordingEmailService()
    clock = ManualClock()
    store = InMemoryInvoiceStore()
    renderer = TextInvoiceRenderer()
    router = build_router(uow=db, email=email, renderer=renderer, store=store, clock=clock)
    return Shop(queue, db, email, clock, store, renderer, router)


A = TypeVar("A")
JobRun = Callable[[Job], Coroutine[object, object, None]]
"""A handler of a `Job`, as a worker runs a definition's."""


def run_as_worker(definition: JobDefinition[A], handler: Callable[[A], Awaitable[None]]) -> JobRun:
    """`handler` run on a `Job` as a worker runs it: the payload structured into its arguments."""
    runner = definition.with_handler(handler).runner(anyio.CapacityLimiter(1))

    async def run(job: Job) -> None:
        await runner(job)

    return run
