"""Fixtures for the invoice adapters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skincare_core.shop.models import OrderItem
from skincare_core.shop.ports import InvoiceData


@pytest.fixture
def invoice() -> InvoiceData:
    """A paid invoice of three lines worth Rp 1.375.000."""
    items = (
        OrderItem(product_id=1, name="Serum Vitamin C 30ml", quantity=2, unit_price_rupiah=125_000),
        OrderItem(product_id=2, name="Toner Centella", quantity=1, unit_price_rupiah=1_000_000),
        OrderItem(product_id=3, name="Sunscreen SPF 50", quantity=1, unit_price_rupiah=125_000),
    )
    return InvoiceData(
        order_number="SKN-20261201-ABCD1234",
        issued_at=datetime(2026, 12, 1, 9, 30, tzinfo=UTC),
        customer_email="siti@example.test",
        items=items,
        total_rupiah=1_375_000,
        paid=True,
    )
