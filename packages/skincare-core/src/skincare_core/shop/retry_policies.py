"""The shop's retry policies (full jitter on all of them), each job type's given in its
definition (`skincare_core.shop.job_types`).

E-mails (the daily sales summary too), invoices and order expiry wait out an outage of their
provider or database: 30 attempts whose waits double from 5 s to 15 minutes add up to about
three hours on average, so a one-hour outage loses no e-mail and needs no human. A payment gets
five quick attempts within about a minute: a payment that keeps failing is a case for an
operator (the dead letters and their alarm) while the customer waits, and the provider
redelivers its webhook anyway.
"""

from __future__ import annotations

from datetime import timedelta

from skincare_core.jobs.retry import RetryPolicy

OUTAGE_TOLERANT = RetryPolicy(attempts=30, base=timedelta(seconds=5), cap=timedelta(minutes=15))
"""For work that only needs its provider back: e-mail, PDFs, order expiry."""
PAYMENT = RetryPolicy(attempts=5, base=timedelta(seconds=2), cap=timedelta(seconds=30))
"""A short budget: a stuck payment should reach an operator within a minute or so."""
