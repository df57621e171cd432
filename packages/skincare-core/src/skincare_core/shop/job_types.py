"""The shop's job types, declared once each as a `JobDefinition`: the name that routes a job,
its arguments, its named queue and its retry policy. The handlers need the shop's adapters, so
they are bound where the worker is composed (`skincare_core.shop.handlers.shop_definitions`);
these declarations are enough to enqueue.

Jobs written by the release before typed definitions carried their integers as strings
(`{"order_id": "42"}`): the order jobs upgrade that form (`legacy_digits`) so they still run.
"""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from skincare_core.jobs.arguments import legacy_digits
from skincare_core.jobs.definitions import Definitions, JobDefinition
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes
from skincare_core.shop.retry_policies import OUTAGE_TOLERANT, PAYMENT

SEND_CONFIRMATION_EMAIL = "send_confirmation_email"
PROCESS_PAYMENT = "process_payment"
GENERATE_INVOICE_PDF = "generate_invoice_pdf"
SEND_PAYMENT_RECEIVED_EMAIL = "send_payment_received_email"
EXPIRE_UNPAID_ORDER = "expire_unpaid_order"
SEND_DAILY_SALES_SUMMARY = "send_daily_sales_summary"

CRITICAL_QUEUE = "critical"
"""Money: a payment waits behind nothing."""
BULK_QUEUE = "bulk"
"""Slow, deferrable work (PDFs) that must never hold up the other queues."""


def _positive(_: object, attribute: object, value: int) -> None:
    if value <= 0:
        raise ValueError(f"order_id must be a positive integer, got {value}")


def _not_blank(_: object, attribute: object, value: str) -> None:
    if not value.strip():
        raise ValueError("event_id must not be blank")


@frozen
class OrderJob:
    """The arguments of a job about one order: its id."""

    order_id: int = field(validator=_positive)


@frozen
class PaymentJob:
    """The arguments of `process_payment`: the stored gateway event to apply."""

    event_id: str = field(validator=_not_blank)


@frozen
class SalesSummaryJob:
    """The arguments of `send_daily_sales_summary`: its schedule's tick (aware); the summary
    reports the day before it."""

    tick: datetime


# Older releases wrote {"order_id": "42"}; read as 42, anything else still an error.
_LEGACY_ORDER = legacy_digits("order_id")

CONFIRMATION_EMAIL = JobDefinition(
    SEND_CONFIRMATION_EMAIL, OrderJob, retry=OUTAGE_TOLERANT, upgrade=_LEGACY_ORDER
)
PAYMENT_RECEIVED_EMAIL = JobDefinition(
    SEND_PAYMENT_RECEIVED_EMAIL, OrderJob, retry=OUTAGE_TOLERANT, upgrade=_LEGACY_ORDER
)
INVOICE_PDF = JobDefinition(
    GENERATE_INVOICE_PDF,
    OrderJob,
    queue=BULK_QUEUE,
    retry=OUTAGE_TOLERANT,
    upgrade=_LEGACY_ORDER,
)
ORDER_EXPIRY = JobDefinition(
    EXPIRE_UNPAID_ORDER, OrderJob, retry=OUTAGE_TOLERANT, upgrade=_LEGACY_ORDER
)
PAYMENT_JOB = JobDefinition(PROCESS_PAYMENT, PaymentJob, queue=CRITICAL_QUEUE, retry=PAYMENT)
DAILY_SALES_SUMMARY_JOB = JobDefinition(
    SEND_DAILY_SALES_SUMMARY, SalesSummaryJob, queue=DEFAULT_QUEUE, retry=OUTAGE_TOLERANT
)

SHOP_JOBS = Definitions(
    PAYMENT_JOB,
    CONFIRMATION_EMAIL,
    PAYMENT_RECEIVED_EMAIL,
    ORDER_EXPIRY,
    DAILY_SALES_SUMMARY_JOB,
    INVOICE_PDF,
)
"""Every shop job type, without handlers: enough to enqueue, route and size retries."""

SHOP_ROUTES: QueueRoutes = SHOP_JOBS.routes
"""Where the shop's job types go (from their definitions); other teams add theirs with
`SHOP_ROUTES.with_types(...)`."""
