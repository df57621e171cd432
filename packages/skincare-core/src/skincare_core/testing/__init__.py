"""In-memory adapters and fakes for tests, importable by any team.

The queue contract suite is in `skincare_core.testing.contract` (it needs pytest).
"""

from skincare_core.testing.clock import ManualClock
from skincare_core.testing.email import RecordingEmailService, SentEmail
from skincare_core.testing.invoices import InMemoryInvoiceStore, TextInvoiceRenderer
from skincare_core.testing.memory_db import InMemoryDatabase, InMemoryUnitOfWork
from skincare_core.testing.memory_queue import InMemoryQueue

__all__ = [
    "InMemoryDatabase",
    "InMemoryInvoiceStore",
    "InMemoryQueue",
    "InMemoryUnitOfWork",
    "ManualClock",
    "RecordingEmailService",
    "SentEmail",
    "TextInvoiceRenderer",
]
