"""The shop's job types, one constant each (the strings that route a job to its handler), and
the named queue each goes to."""

from __future__ import annotations

from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes

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

SHOP_ROUTES = QueueRoutes(
    {
        PROCESS_PAYMENT: CRITICAL_QUEUE,
        SEND_CONFIRMATION_EMAIL: DEFAULT_QUEUE,
        SEND_PAYMENT_RECEIVED_EMAIL: DEFAULT_QUEUE,
        EXPIRE_UNPAID_ORDER: DEFAULT_QUEUE,
        SEND_DAILY_SALES_SUMMARY: DEFAULT_QUEUE,
        GENERATE_INVOICE_PDF: BULK_QUEUE,
    }
)
"""Where the shop's job types go; other teams add theirs with `SHOP_ROUTES.with_types(...)`."""
