"""The shop's test kit: an in-memory database with real transactions, e-mail and invoice fakes."""

from skincare_core.testing.clock import ManualClock
from skincare_core.testing.shop.email import RecordingEmailService, SentEmail, SentSummary
from skincare_core.testing.shop.invoices import InMemoryInvoiceStore, TextInvoiceRenderer
from skincare_core.testing.shop.memory_db import InMemoryDatabase, InMemoryUnitOfWork

__all__ = [
    "InMemoryDatabase",
    "InMemoryInvoiceStore",
    "InMemoryUnitOfWork",
    "ManualClock",
    "RecordingEmailService",
    "SentEmail",
    "SentSummary",
    "TextInvoiceRenderer",
]
