"""The shop's job handlers, and a router with all of them registered."""

from __future__ import annotations

from skincare_core.jobs.router import Router
from skincare_core.shop.handlers.emails import OrderEmailHandler
from skincare_core.shop.handlers.expiry import OrderExpiryHandler
from skincare_core.shop.handlers.invoice import InvoiceHandler, invoice_key
from skincare_core.shop.handlers.payment import PaymentHandler
from skincare_core.shop.handlers.sales_summary import SalesSummaryHandler
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SEND_DAILY_SALES_SUMMARY,
    SEND_PAYMENT_RECEIVED_EMAIL,
)
from skincare_core.shop.models import NotificationType
from skincare_core.shop.ports import Clock, EmailService, InvoiceRenderer, InvoiceStore
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

__all__ = [
    "InvoiceHandler",
    "OrderEmailHandler",
    "OrderExpiryHandler",
    "PaymentHandler",
    "SalesSummaryHandler",
    "build_router",
    "invoice_key",
]


def build_router(
    *,
    uow: UnitOfWorkFactory,
    email: EmailService,
    renderer: InvoiceRenderer,
    store: InvoiceStore,
    clock: Clock,
    admin_email: str | None = None,
) -> Router:
    """A router serving the shop's job types; the daily sales summary (to `admin_email`) only
    when there is an admin address."""
    router = Router()
    for job_type, kind in (
        (SEND_CONFIRMATION_EMAIL, NotificationType.ORDER_CONFIRMATION),
        (SEND_PAYMENT_RECEIVED_EMAIL, NotificationType.PAYMENT_RECEIVED),
    ):
        router.register(job_type, OrderEmailHandler(uow=uow, email=email, clock=clock, kind=kind))
    router.register(PROCESS_PAYMENT, PaymentHandler(uow=uow, clock=clock))
    router.register(EXPIRE_UNPAID_ORDER, OrderExpiryHandler(uow=uow))
    router.register(
        GENERATE_INVOICE_PDF,
        InvoiceHandler(uow=uow, renderer=renderer, store=store, clock=clock),
    )
    if admin_email:
        summary = SalesSummaryHandler(uow=uow, email=email, clock=clock, to=admin_email)
        router.register(SEND_DAILY_SALES_SUMMARY, summary)
    return router
