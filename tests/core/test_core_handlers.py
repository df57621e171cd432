"""Every branch of the shop's job handlers and router, on the in-memory kit."""

from __future__ import annotations

import attrs
import pytest

from skincare_core.jobs.errors import InvalidJob, PermanentJobError, UnknownJobType
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.shop.errors import AlreadyNotified, PaymentAmountMismatch, PaymentNotFound
from skincare_core.shop.handlers import build_router, invoice_key
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SEND_DAILY_SALES_SUMMARY,
    SEND_PAYMENT_RECEIVED_EMAIL,
    SHOP_ROUTES,
)
from skincare_core.shop.models import (
    InvoiceRecord,
    NotificationType,
    OrderStatus,
    PaymentEvent,
    PaymentStatus,
)
from skincare_core.shop.webhooks import PaymentWebhookService
from tests.core.core_kit import Shop

pytestmark = pytest.mark.anyio
CONFIRMATION = NotificationType.ORDER_CONFIRMATION


@pytest.mark.parametrize("raw", ["", "abc", "0", "-3", "1.5", " 1", "²", "١٢"])
async def test_confirmation_with_a_bad_order_id_is_invalid(shop: Shop, raw: str) -> None:
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id=raw))
    assert shop.email.sent == []


async def test_confirmation_without_order_id_is_invalid(shop: Shop) -> None:
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL))


async def test_confirmation_of_a_gone_order_sends_nothing(shop: Shop) -> None:
    await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id="999"))
    assert shop.email.sent == []
    assert shop.db.state.notifications == {}


async def test_confirmation_of_an_order_whose_user_is_gone_sends_nothing(shop: Shop) -> None:
    order = await shop.place_order()
    del shop.db.state.users[order.user_id]
    await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id)))
    assert shop.email.sent == []


async def test_confirmation_sends_then_records(shop: Shop) -> None:
    order = await shop.place_order(quantity=3, price=20_000)
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id))
    await shop.router.dispatch(job)
    [mail] = shop.email.of_kind("order_confirmation")
    user = shop.db.state.users[order.user_id]
    assert mail.to == user.email
    assert mail.data.order_number == order.order_number
    assert mail.data.total_rupiah == 60_000
    assert mail.data.idempotency_key == job.id
    assert mail.data.language == user.language
    assert shop.db.state.notifications == {(order.id, CONFIRMATION): shop.clock.now()}


async def test_confirmation_already_notified_sends_nothing(shop: Shop) -> None:
    order = await shop.place_order()
    await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id)))
    await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id)))
    assert len(shop.email.sent) == 1


async def test_confirmation_recorded_concurrently_returns(shop: Shop) -> None:
    order = await shop.place_order()
    shop.db.fail_next("mark_notified", AlreadyNotified("raced"))
    await shop.router.dispatch(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id)))
    assert len(shop.email.sent) == 1


async def test_confirmation_send_failure_raises_records_nothing_and_retries(shop: Shop) -> None:
    order = await shop.place_order()
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id))
    shop.email.fail_next()
    with pytest.raises(ConnectionError):
        await shop.router.dispatch(job)
    assert shop.email.sent == []
    assert shop.db.state.notifications == {}
    await shop.router.dispatch(job)
    assert len(shop.email.sent) == 1
    assert (order.id, CONFIRMATION) in shop.db.state.notifications


async def test_payment_received_email_sends_once(shop: Shop) -> None:
    order = await shop.place_order()
    job = new_job(SEND_PAYMENT_RECEIVED_EMAIL, order_id=str(order.id))
    await shop.router.dispatch(job)
    await shop.router.dispatch(job)
    [mail] = shop.email.of_kind("payment_received")
    assert mail.data.order_number == order.order_number
    assert shop.email.of_kind("order_confirmation") == []
    assert (order.id, NotificationType.PAYMENT_RECEIVED) in shop.db.state.notifications


async def pay(shop: Shop, order_id: int, amount: int, event_id: str = "evt-1") -> None:
    event = PaymentEvent(event_id, order_id, "paid", amount)
    assert await PaymentWebhookService(uow=shop.db).receive(event)
    message = (await shop.queue.receive(1))[0]
    await shop.queue.ack_many([message])


@pytest.mark.parametrize("payload", [{}, {"event_id": ""}, {"event_id": "  "}])
async def test_payment_without_event_id_is_invalid(shop: Shop, payload: dict[str, str]) -> None:
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(PROCESS_PAYMENT, **payload))


async def test_payment_of_an_unknown_event_is_not_found_and_retried(shop: Shop) -> None:
    with pytest.raises(PaymentNotFound) as raised:
        await shop.router.dispatch(new_job(PROCESS_PAYMENT, event_id="nope"))
    assert not isinstance(raised.value, PermanentJobError)


async def test_payment_pays_the_order_and_queues_follow_ups(shop: Shop) -> None:
    order = await shop.place_order(quantity=2, price=50_000)
    await pay(shop, order.id, 100_000)
    await shop.router.dispatch(new_job(PROCESS_PAYMENT, event_id="evt-1"))
    paid = shop.db.state.orders[order.id]
    assert (paid.status, paid.payment_status) == (OrderStatus.PAID, PaymentStatus.PAID)
    payment = shop.db.state.payments["evt-1"]
    assert (payment.status, payment.paid_at) == (PaymentStatus.PAID, shop.clock.now())
    jobs = sorted((job.type, dict(job.payload)) for job in shop.queue.jobs())
    assert jobs == [
        (GENERATE_INVOICE_PDF, {"order_id": order.id}),
        (SEND_PAYMENT_RECEIVED_EMAIL, {"order_id": order.id}),
    ]


async def test_payment_already_applied_adds_no_jobs(shop: Shop) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    await pay(shop, order.id, 10_000)
    job = new_job(PROCESS_PAYMENT, event_id="evt-1")
    await shop.router.dispatch(job)
    before = shop.queue.jobs()
    await shop.router.dispatch(job)
    assert shop.queue.jobs() == before
    assert len(before) == 2


async def test_payment_amount_mismatch_is_permanent_and_order_not_moved(shop: Shop) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    await pay(shop, order.id, 9_999)
    with pytest.raises(PaymentAmountMismatch):
        await shop.router.dispatch(new_job(PROCESS_PAYMENT, event_id="evt-1"))
    assert shop.db.state.orders[order.id].status is OrderStatus.PENDING
    assert shop.db.state.payments["evt-1"].status is PaymentStatus.PENDING
    assert shop.queue.jobs() == []


async def test_payment_of_an_order_not_pending_adds_no_follow_ups(shop: Shop) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    await pay(shop, order.id, 10_000)
    shop.db.state.orders[order.id] = attrs.evolve(order, status=OrderStatus.CANCELLED)
    await shop.router.dispatch(new_job(PROCESS_PAYMENT, event_id="evt-1"))
    assert shop.db.state.orders[order.id].status is OrderStatus.CANCELLED
    assert shop.db.state.payments["evt-1"].status is PaymentStatus.PAID
    assert shop.queue.jobs() == []


async def test_payment_of_a_gone_order_is_invalid(shop: Shop) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    await pay(shop, order.id, 10_000)
    del shop.db.state.orders[order.id]
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(PROCESS_PAYMENT, event_id="evt-1"))


async def test_invoice_is_rendered_stored_and_recorded_once(shop: Shop) -> None:
    order = await shop.place_order(quantity=2, price=50_000)
    job = new_job(GENERATE_INVOICE_PDF, order_id=str(order.id))
    await shop.router.dispatch(job)
    await shop.router.dispatch(job)
    key = invoice_key(order.order_number)
    assert key == f"invoices/{order.order_number}.pdf"
    assert shop.renderer.rendered == 1
    text = shop.store.files[key].decode()
    assert order.order_number in text
    assert "TOTAL 100000 UNPAID" in text
    assert shop.db.state.invoices[order.id] == InvoiceRecord(order.id, key, shop.clock.now())


async def test_invoice_of_a_paid_order_says_paid(shop: Shop) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    shop.db.state.orders[order.id] = attrs.evolve(order, status=OrderStatus.PAID)
    await shop.router.dispatch(new_job(GENERATE_INVOICE_PDF, order_id=str(order.id)))
    assert "PAID" in shop.store.files[invoice_key(order.order_number)].decode().split()[-1]


async def test_invoice_already_recorded_is_not_rendered(shop: Shop) -> None:
    order = await shop.place_order()
    record = InvoiceRecord(order.id, "elsewhere.pdf", shop.clock.now())
    shop.db.state.invoices[order.id] = record
    await shop.router.dispatch(new_job(GENERATE_INVOICE_PDF, order_id=str(order.id)))
    assert shop.renderer.rendered == 0
    assert shop.store.files == {}
    assert shop.db.state.invoices[order.id] == record


@pytest.mark.parametrize("gone", ["order", "user"])
async def test_invoice_of_a_gone_order_does_nothing(shop: Shop, gone: str) -> None:
    order = await shop.place_order()
    if gone == "order":
        del shop.db.state.orders[order.id]
    else:
        del shop.db.state.users[order.user_id]
    await shop.router.dispatch(new_job(GENERATE_INVOICE_PDF, order_id=str(order.id)))
    assert shop.renderer.rendered == 0
    assert shop.db.state.invoices == {}


async def test_invoice_stored_but_not_recorded_is_recorded_without_rendering(shop: Shop) -> None:
    order = await shop.place_order()
    key = invoice_key(order.order_number)
    shop.store.files[key] = b"earlier"
    await shop.router.dispatch(new_job(GENERATE_INVOICE_PDF, order_id=str(order.id)))
    assert shop.renderer.rendered == 0
    assert shop.store.files[key] == b"earlier"
    assert shop.db.state.invoices[order.id].storage_key == key


async def test_invoice_with_a_bad_order_id_is_invalid(shop: Shop) -> None:
    with pytest.raises(InvalidJob):
        await shop.router.dispatch(new_job(GENERATE_INVOICE_PDF, order_id="x"))


async def test_router_refuses_an_unknown_type(shop: Shop) -> None:
    with pytest.raises(UnknownJobType) as raised:
        await shop.router.dispatch(new_job("mystery"))
    assert isinstance(raised.value, PermanentJobError)
    assert raised.value.job_type == "mystery"
    assert "mystery" in str(raised.value)


async def test_router_serves_the_shop_types_each_routed_to_a_queue(shop: Shop) -> None:
    types = {
        SEND_CONFIRMATION_EMAIL,
        SEND_PAYMENT_RECEIVED_EMAIL,
        PROCESS_PAYMENT,
        GENERATE_INVOICE_PDF,
        EXPIRE_UNPAID_ORDER,
    }
    assert shop.router.job_types == types
    # The daily sales summary is served only when the shop has an admin to send it to.
    with_admin = build_router(
        uow=shop.db,
        email=shop.email,
        renderer=shop.renderer,
        store=shop.store,
        clock=shop.clock,
        admin_email="admin@example.com",
    )
    assert with_admin.job_types == {*types, SEND_DAILY_SALES_SUMMARY}
    assert set(SHOP_ROUTES.routes) == with_admin.job_types


async def test_router_runs_other_teams_handlers_and_refuses_a_second_register() -> None:
    router = Router()
    seen: list[str] = []

    async def handler(job: Job) -> None:
        seen.append(job.id)

    router.register("loyalty_points", handler)
    with pytest.raises(ValueError, match="loyalty_points"):
        router.register("loyalty_points", handler)
    job = new_job("loyalty_points")
    await router.dispatch(job)
    assert seen == [job.id]
