"""The in-memory shop kit wired together, shared by the core tests (a uniquely named module)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import TypeVar

import anyio
import attrs

from skincare_core.jobs.definitions import JobDefinition
from skincare_core.jobs.job import Job
from skincare_core.jobs.router import Router
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import EXPIRE_UNPAID_ORDER, SEND_CONFIRMATION_EMAIL
from skincare_core.shop.models import Order
from skincare_core.testing.drain import JobDrain
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
    """The in-memory kit wired together, as the worker service wires the real one: the shop's
    jobs go to `drain`'s queues (`queue` is its default one), whose time is `clock`'s."""

    drain: JobDrain
    queue: InMemoryQueue
    db: InMemoryDatabase
    email: RecordingEmailService
    clock: ManualClock
    store: InMemoryInvoiceStore
    renderer: TextInvoiceRenderer
    router: Router

    async def place_order(self, quantity: int = 2, price: int = 50_000) -> Order:
        """A user with one product in the cart checks out; its jobs (the confirmation and the
        order's expiry, due a day later) are cancelled unrun."""
        user = self.db.add_user(f"user{self.db.state.next_id}@example.com")
        product = self.db.add_product(f"SKU{self.db.state.next_id}", "Serum", price, 10)
        self.db.state.carts[(user.id, product.id)] = quantity
        order = await CheckoutService(uow=self.db, clock=self.clock).checkout(user.id, "key")
        confirmation, expiry = self.queue.jobs()
        assert (confirmation.type, expiry.type) == (SEND_CONFIRMATION_EMAIL, EXPIRE_UNPAID_ORDER)
        await self.discard_jobs()
        return order

    async def discard_jobs(self) -> None:
        """Cancel every job waiting on the queues, unrun."""
        for queue in self.drain.queues.every:
            for job in queue.jobs():
                assert await queue.cancel(job.id) is True


def make_shop() -> Shop:
    """A fresh kit: a test drain on the shop's clock, the database, fakes, and the shop's
    router, which the drain runs jobs through."""
    clock = ManualClock()
    drain = JobDrain(Router(), clock=clock)
    # One queue takes every job, whatever queue its type names: the core tests read one queue.
    db = InMemoryDatabase(outbox_sink=drain.queue())
    email = RecordingEmailService()
    store = InMemoryInvoiceStore()
    renderer = TextInvoiceRenderer()
    router = build_router(uow=db, email=email, renderer=renderer, store=store, clock=clock)
    drain.handlers = router
    return Shop(drain, drain.queue(), db, email, clock, store, renderer, router)


A = TypeVar("A")
JobRun = Callable[[Job], Coroutine[object, object, None]]
"""A handler of a `Job`, as a worker runs a definition's."""


def run_as_worker(definition: JobDefinition[A], handler: Callable[[A], Awaitable[None]]) -> JobRun:
    """`handler` run on a `Job` as a worker runs it: the payload structured into its arguments."""
    runner = definition.with_handler(handler).runner(anyio.CapacityLimiter(1))

    async def run(job: Job) -> None:
        await runner(job)

    return run
