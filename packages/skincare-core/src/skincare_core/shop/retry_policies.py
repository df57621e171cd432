"""The shop's retry policies per job type (full jitter on all of them).

E-mails (the daily sales summary too), invoices and order expiry wait out an outage of their
provider or database: 30 attempts whose waits double from 5 s to 15 minutes add up to about
three hours on average, so a one-hour outage loses no e-mail and needs no human. A payment gets
five quick attempts within about a minute: a payment that keeps failing is a case for an
operator (the dead letters and their alarm) while the customer waits, and the provider
redelivers its webhook anyway.
"""

from __future__ import annotations

from datetime import timedelta

from skincare_core.jobs.retry import RetryPolicies, RetryPolicy
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SEND_DAILY_SALES_SUMMARY,
    SEND_PAYMENT_RECEIVED_EMAIL,
)

OUTAGE_TOLERANT = RetryPolicy(attempts=30, base=timedelta(seconds=5), cap=timedelta(minutes=15))
"""For work that only needs its provider back: e-mail, PDFs, order expiry."""
PAYMENT = RetryPolicy(attempts=5, base=timedelta(seconds=2), cap=timedelta(seconds=30))
"""A short budget: a stuck payment should reach an operator within a minute or so."""

SHOP_RETRY_POLICIES: RetryPolicies = {
    SEND_CONFIRMATION_EMAIL: OUTAGE_TOLERANT,
    SEND_PAYMENT_RECEIVED_EMAIL: OUTAGE_TOLERANT,
    GENERATE_INVOICE_PDF: OUTAGE_TOLERANT,
    EXPIRE_UNPAID_ORDER: OUTAGE_TOLERANT,
    SEND_DAILY_SALES_SUMMARY: OUTAGE_TOLERANT,
    PROCESS_PAYMENT: PAYMENT,
}
