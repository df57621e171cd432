"""An order unpaid at the end of its payment window expires and its stock goes back; money that
arrives for it afterwards is kept and dead-lettered, never applied or dropped."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest

from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SHOP_ROUTES,
)
from skincare_core.shop.models import Order, OrderStatus, PaymentEvent, PaymentStatus
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.drain import JobDrain
from skincare_core.testing.jobs import InMemoryQueues
from skincare_core.testing.shop import (
    InMemoryDatabase,
    InMemoryInvoiceStore,
    ManualClock,
    RecordingEmailService,
    TextInvoiceRenderer,
)
from tests.core.worker_kit import eventually

pytestmark = pytest.mark.anyio
WINDOW = timedelta(hours=1)


class ExpiringShop:
    """The in-memory shop on named queues, as the processes wire it.

    Without `monotonic` a test drain runs the jobs on the shop's clock, moved by hand; with it
    (time.monotonic) the queues run in real time, for workers.
    """

    def __init__(
        self, window: timedelta = WINDOW, monotonic: Callable[[], float] | None = None
    ) -> None:
        self.clock = ManualClock()
        self.drain = JobDrain(Router(), clock=self.clock)
        if monotonic is None:
            self.queues = self.drain.queues
        else:
            self.queues = InMemoryQueues(wait=timedelta(seconds=0.02), monotonic=monotonic)
        self.db = InMemoryDatabase(outbox_sink=self.queues, routes=SHOP_ROUTES)
        self.router: Router = build_router(
            uow=self.db,
            email=RecordingEmailService(),
            renderer=TextInvoiceRenderer(),
            store=InMemoryInvoiceStore(),
            clock=self.clock,
        )
        self.drain.handlers = self.router
        self.checkout = CheckoutService(uow=self.db, clock=self.clock, payment_window=window)
        self.webhooks = PaymentWebhookService(uow=self.db)

    async def place_order(self) -> Order:
        user = self.db.add_user("buyer@example.com")
        product = self.db.add_product("SRM-01", "Serum", 50_000, 10)
        self.db.state.carts[(user.id, product.id)] = 2
        return await self.checkout.checkout(user.id, "key")

    def stock(self) -> int:
        [product] = self.db.state.products.values()
        return product.stock

    def order(self, order_id: int) -> Order:
        return self.db.state.orders[order_id]

    async def run_ready(self, queue: str) -> list[str]:
        """Run every job of `queue` due now; the types of those done."""
        runs = await self.drain.drain(queue)
        return [run.job.type for run in runs if run.outcome == "done"]


async def test_an_unpaid_order_expires_when_its_window_closes_and_its_stock_goes_back() -> None:
    shop = ExpiringShop()
    order = await shop.place_order()
    assert shop.stock() == 8
    assert await shop.run_ready("default") == [SEND_CONFIRMATION_EMAIL]
    shop.drain.advance(WINDOW - timedelta(seconds=1))
    assert await shop.run_ready("default") == []
    assert shop.order(order.id).status is OrderStatus.PENDING
    shop.drain.advance(timedelta(seconds=2))
    assert await shop.run_ready("default") == [EXPIRE_UNPAID_ORDER]
    expired = shop.order(order.id)
    assert (expired.status, expired.payment_status) == (OrderStatus.EXPIRED, PaymentStatus.UNPAID)
    assert shop.stock() == 10


async def test_a_paid_order_is_left_alone_when_its_window_closes() -> None:
    shop = ExpiringShop()
    order = await shop.place_order()
    await shop.webhooks.receive(PaymentEvent("evt-1", order.id, "paid", order.total_rupiah))
    assert await shop.run_ready("critical") == [PROCESS_PAYMENT]
    assert await shop.run_ready("bulk") == [GENERATE_INVOICE_PDF]
    shop.drain.advance(WINDOW + timedelta(seconds=1))
    assert EXPIRE_UNPAID_ORDER in await shop.run_ready("default")
    assert (shop.order(order.id).status, shop.stock()) == (OrderStatus.PAID, 8)


async def test_payment_for_an_expired_order_is_kept_and_its_job_dead_lettered() -> None:
    """The worker process's shape: one Worker per named queue, in real time."""
    shop = ExpiringShop(window=timedelta(milliseconds=100), monotonic=time.monotonic)
    order = await shop.place_order()
    critical = shop.queues.queue("critical")
    async with anyio.create_task_group() as tg:
        for name in SHOP_ROUTES.names:
            tg.start_soon(Worker(queue=shop.queues.queue(name), router=shop.router).run)
        await eventually(lambda: shop.order(order.id).status is OrderStatus.EXPIRED)
        event = PaymentEvent("evt-late", order.id, "paid", order.total_rupiah)
        assert await shop.webhooks.receive(event) is True
        await eventually(lambda: critical.depth == 0)
        tg.cancel_scope.cancel()
    [dead] = await shop.queues.list()
    assert (dead.job.type, dead.queue, dead.attempts) == (PROCESS_PAYMENT, "critical", 1)
    assert dead.error.startswith("PaymentForExpiredOrder: event evt-late paid 100000 for order")
    assert "refund the payment or reinstate the order" in dead.error
    payment = shop.db.state.payments["evt-late"]
    assert (payment.status, payment.paid_at) == (PaymentStatus.PENDING, None)
    assert (shop.order(order.id).status, shop.stock()) == (OrderStatus.EXPIRED, 10)
    assert [q.depth for q in map(shop.queues.queue, SHOP_ROUTES.names)] == [0, 0, 0]


async def test_expiry_of_a_gone_order_does_nothing_and_a_bad_id_is_invalid() -> None:
    shop = ExpiringShop()
    await shop.router.dispatch(new_job(EXPIRE_UNPAID_ORDER, order_id="404"))
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(EXPIRE_UNPAID_ORDER, order_id="x"))


@pytest.mark.parametrize("window", [timedelta(0), timedelta(seconds=-1)])
def test_the_payment_window_must_be_positive(window: timedelta) -> None:
    shop = ExpiringShop()
    with pytest.raises(ValueError, match="payment window must be positive"):
        CheckoutService(uow=shop.db, clock=shop.clock, payment_window=window)
