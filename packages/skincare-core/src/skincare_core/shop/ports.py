"""The outside world the shop's handlers call: e-mail, invoice rendering and storage, time.

Storage (the unit of work and its repositories) is in unit_of_work.py and repositories.py."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from attrs import frozen

from skincare_core.shop.models import (
    DailySales,
    OrderItem,
)


@frozen
class OrderEmail:
    """What an order e-mail says. `idempotency_key` is the job id (Message-ID, provider key)."""

    order_number: str
    items: tuple[OrderItem, ...]
    total_rupiah: int
    idempotency_key: str
    language: str = "id"


@frozen
class SalesSummaryEmail:
    """The daily sales summary for the shop's admin; `idempotency_key` as in OrderEmail."""

    sales: DailySales
    idempotency_key: str
    language: str = "id"


class EmailService(Protocol):
    """Sends the shop's e-mails; a permanent failure raises PermanentJobError."""

    async def send_order_confirmation(self, to: str, data: OrderEmail) -> None:
        """The order-placed e-mail."""

    async def send_payment_received(self, to: str, data: OrderEmail) -> None:
        """The payment-received e-mail."""

    async def send_sales_summary(self, to: str, data: SalesSummaryEmail) -> None:
        """The daily sales summary, to the shop's admin."""


@frozen
class InvoiceData:
    """What an invoice shows."""

    order_number: str
    issued_at: datetime
    customer_email: str
    items: tuple[OrderItem, ...]
    total_rupiah: int
    paid: bool


class InvoiceRenderer(Protocol):
    """Turns invoice data into a PDF. Blocking and CPU-bound: callers run it in a thread."""

    def render(self, invoice: InvoiceData) -> bytes:
        """The PDF bytes."""


class InvoiceStore(Protocol):
    """Where invoice PDFs live; writes are atomic and storing an existing key is a no-op."""

    async def exists(self, key: str) -> bool:
        """Whether the key holds a stored invoice."""

    async def put(self, key: str, pdf: bytes) -> None:
        """Store `pdf` under `key` unless it is already there."""


class Clock(Protocol):
    """Wall-clock time, so tests can control it."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
