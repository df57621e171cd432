"""End to end on the in-memory kit with the real adapters: a paid order, run by core's Worker,
leaves one invoice PDF and one e-mail of each kind, even when jobs are delivered twice."""

from __future__ import annotations

import email
import email.policy
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs import enqueue
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.worker import Worker
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SEND_PAYMENT_RECEIVED_EMAIL,
)
from skincare_core.shop.models import NotificationType, Order, OrderStatus, PaymentEvent
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import InMemoryDatabase, ManualClock
from skincare_email import MaildirEmailService
from skincare_invoice import DirectoryInvoiceStore, PdfInvoiceRenderer
from tests.invoice.invoice_support import pdf_text

pytestmark = pytest.mark.anyio
SUBJECTS = {
    "id": ("Pesanan {} telah kami terima", "Pembayaran pesanan {} telah diterima"),
    "en": ("We received your order {}", "Payment received for order {}"),
}


async def place_paid_order(db: InMemoryDatabase, clock: ManualClock, language: str) -> Order:
    user = db.add_user("siti@example.test", language)
    serum = db.add_product("SRM-01", "Serum Vitamin C 30ml", 125_000, stock=10)
    toner = db.add_product("TNR-01", "Toner Centella", 1_000_000, stock=5)
    async with db() as uow:
        await uow.carts.set_quantity(user.id, serum.id, 2)
        await uow.carts.set_quantity(user.id, toner.id, 1)
    order = await CheckoutService(uow=db, clock=clock).checkout(user.id, "checkout-1")
    event = PaymentEvent("evt-1", order.id, "paid", order.total_rupiah)
    assert await PaymentWebhookService(uow=db).receive(event)
    return order


async def run_until_idle(worker: Worker, queue: InMemoryQueue) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        with anyio.fail_after(15):
            # Neither the queue nor the worker offers an "idle" event to wait on.
            while queue.depth or worker.in_flight:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()


def duplicate(job: Job) -> Job:
    """The same work under a fresh job id: a second delivery the queue cannot dedupe."""
    return new_job(job.type, **job.payload)


def again(order: Order) -> list[Job]:
    """Every job of the flow once more, as a redelivery after the first run finished."""
    return [new_job(PROCESS_PAYMENT, event_id="evt-1")] + [
        new_job(job_type, order_id=str(order.id))
        for job_type in (
            SEND_CONFIRMATION_EMAIL,
            SEND_PAYMENT_RECEIVED_EMAIL,
            GENERATE_INVOICE_PDF,
        )
    ]


def files_under(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file())


@pytest.mark.parametrize("language", ["id", "en"])
async def test_a_paid_order_leaves_one_pdf_and_one_email_of_each_kind(
    tmp_path: Path, language: str
) -> None:
    queue = InMemoryQueue(wait=timedelta(milliseconds=50))
    db = InMemoryDatabase(outbox_sink=queue)
    clock = ManualClock()
    order = await place_paid_order(db, clock, language)
    (payment,) = [job for job in queue.jobs() if job.type == PROCESS_PAYMENT]
    await enqueue(queue, duplicate(payment))
    # The order is paid: its expiry, a day away, would change nothing.
    (expiry,) = [job for job in queue.jobs() if job.type == EXPIRE_UNPAID_ORDER]
    assert await queue.cancel(expiry.id) is True

    maildir, invoices = tmp_path / "mail", tmp_path / "invoices"
    router = build_router(
        uow=db,
        email=MaildirEmailService(maildir, "Skincare <shop@skincare.test>"),
        renderer=PdfInvoiceRenderer(shop_name="Skincare"),
        store=DirectoryInvoiceStore(invoices),
        clock=clock,
    )
    await run_until_idle(Worker(queue=queue, router=router, concurrency=4), queue)
    first_pdfs = {path: path.read_bytes() for path in files_under(invoices)}
    first_mails = files_under(maildir)
    await queue.enqueue_many([Envelope(job) for job in again(order)])
    await run_until_idle(Worker(queue=queue, router=router, concurrency=4), queue)

    assert await queue.count() == 0
    assert {path: path.read_bytes() for path in files_under(invoices)} == first_pdfs
    assert files_under(maildir) == first_mails
    (pdf,) = first_pdfs
    assert pdf == invoices / "invoices" / f"{order.order_number}.pdf"
    text = pdf_text(first_pdfs[pdf])
    assert order.order_number in text
    assert "Status: PAID" in text
    assert "Total Rp 1.250.000" in text

    mails = [
        email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        for path in first_mails
    ]
    confirmation, received = (s.format(order.order_number) for s in SUBJECTS[language])
    assert sorted(str(m["Subject"]) for m in mails) == sorted([confirmation, received])
    assert {str(m["To"]) for m in mails} == {"siti@example.test"}
    assert sorted(str(m["X-Skincare-Notification"]) for m in mails) == [
        "order_confirmation",
        "payment_received",
    ]
    assert {str(m["X-Skincare-Order"]) for m in mails} == {order.order_number}
    assert all("Rp 1.250.000" in str(m.get_body(("plain",))) for m in mails)

    async with db() as uow:
        stored = await uow.orders.get(order.id)
        notified = [
            await uow.notifications.is_notified(order.id, kind) for kind in NotificationType
        ]
        record = await uow.invoices.get(order.id)
    assert stored is not None
    assert stored.status is OrderStatus.PAID
    assert notified == [True, True]
    assert record is not None
    assert record.storage_key == f"invoices/{order.order_number}.pdf"
