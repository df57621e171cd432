"""In-memory invoice store and a plain-text renderer, for tests without fpdf2."""

from __future__ import annotations

from skincare_core.shop.ports import InvoiceData


class TextInvoiceRenderer:
    """Renders an invoice as UTF-8 text; counts how often it ran."""

    def __init__(self) -> None:
        self.rendered = 0

    def render(self, invoice: InvoiceData) -> bytes:
        """The invoice as text bytes."""
        self.rendered += 1
        lines = [f"INVOICE {invoice.order_number}", invoice.customer_email]
        lines += [f"{i.quantity} x {i.name} @ {i.unit_price_rupiah}" for i in invoice.items]
        lines.append(f"TOTAL {invoice.total_rupiah} {'PAID' if invoice.paid else 'UNPAID'}")
        return "\n".join(lines).encode()


class InMemoryInvoiceStore:
    """Keys to bytes; storing an existing key is a no-op."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    async def exists(self, key: str) -> bool:
        """Whether the key is stored."""
        return key in self.files

    async def put(self, key: str, pdf: bytes) -> None:
        """Store unless present."""
        self.files.setdefault(key, pdf)
