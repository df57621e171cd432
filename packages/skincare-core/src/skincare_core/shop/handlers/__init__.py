"""The shop's job handlers, bound to the shop's job definitions (`shop_definitions`)."""

from __future__ import annotations

from skincare_core.jobs.definitions import Definition, Definitions
from skincare_core.jobs.router import Router
from skincare_core.shop.handlers.emails import OrderEmailHandler
from skincare_core.shop.handlers.expiry import OrderExpiryHandler
from skincare_core.shop.handlers.invoice import InvoiceHandler, invoice_key
from skincare_core.shop.handlers.payment import PaymentHandler
from skincare_core.shop.handlers.sales_summary import SalesSummaryHandler
from skincare_core.shop.job_types import (
    CONFIRMATION_EMAIL,
    DAILY_SALES_SUMMARY_JOB,
    INVOICE_PDF,
    ORDER_EXPIRY,
    PAYMENT_JOB,
    PAYMENT_RECEIVED_EMAIL,
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
    "shop_definitions",
]


def shop_definitions(
    *,
    uow: UnitOfWorkFactory,
    email: EmailService,
    renderer: InvoiceRenderer,
    store: InvoiceStore,
    clock: Clock,
    admin_email: str | None = None,
) -> Definitions:
    """The shop's job types served by their handlers; the daily sales summary (to
    `admin_email`) only when there is an admin address."""

    def order_email(kind: NotificationType) -> OrderEmailHandler:
        return OrderEmailHandler(uow=uow, email=email, clock=clock, kind=kind)

    served: list[Definition] = [
        CONFIRMATION_EMAIL.with_handler(order_email(NotificationType.ORDER_CONFIRMATION)),
        PAYMENT_RECEIVED_EMAIL.with_handler(order_email(NotificationType.PAYMENT_RECEIVED)),
        PAYMENT_JOB.with_handler(PaymentHandler(uow=uow, clock=clock)),
        ORDER_EXPIRY.with_handler(OrderExpiryHandler(uow=uow)),
        INVOICE_PDF.with_handler(
            InvoiceHandler(uow=uow, renderer=renderer, store=store, clock=clock)
        ),
    ]
    if not admin_email:
        return Definitions(*served)
    summary = SalesSummaryHandler(uow=uow, email=email, clock=clock, to=admin_email)
    return Definitions(*served, DAILY_SALES_SUMMARY_JOB.with_handler(summary))


def build_router(
    *,
    uow: UnitOfWorkFactory,
    email: EmailService,
    renderer: InvoiceRenderer,
    store: InvoiceStore,
    clock: Clock,
    admin_email: str | None = None,
) -> Router:
    """A router serving the shop's job types (`shop_definitions`), for a caller that runs
    jobs without a `Worker` of its own (a test); a worker takes the definitions."""
    return shop_definitions(
        uow=uow, email=email, renderer=renderer, store=store, clock=clock, admin_email=admin_email
    ).router()
