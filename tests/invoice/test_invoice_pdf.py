"""PdfInvoiceRenderer: a real PDF a reader library opens, holding everything an invoice says."""

from __future__ import annotations

import io
import string
from datetime import UTC, datetime

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

import skincare_invoice
from skincare_core.shop.models import OrderItem
from skincare_core.shop.money import format_rupiah
from skincare_core.shop.ports import InvoiceData
from skincare_invoice import PdfInvoiceRenderer, latin1
from tests.invoice.invoice_support import pdf_text

A4_POINTS = (595.28, 841.89)
ISSUED = datetime(2026, 12, 1, tzinfo=UTC)


def test_the_pdf_holds_number_items_and_rupiah_total(invoice: InvoiceData) -> None:
    pdf = PdfInvoiceRenderer(shop_name="Toko Kulit Sehat").render(invoice)
    assert pdf.startswith(b"%PDF-")
    text = pdf_text(pdf)
    for expected in (
        "Toko Kulit Sehat",
        "INVOICE SKN-20261201-ABCD1234",
        "Invoice number: SKN-20261201-ABCD1234",
        "Date: 2026-12-01",
        "Customer: siti@example.test",
        "Status: PAID",
        "Serum Vitamin C 30ml 2 Rp 125.000 Rp 250.000",
        "Toner Centella 1 Rp 1.000.000 Rp 1.000.000",
        "Sunscreen SPF 50 1 Rp 125.000 Rp 125.000",
        "Total Rp 1.375.000",
    ):
        assert expected in text


def test_an_unpaid_invoice_says_so(invoice: InvoiceData) -> None:
    text = pdf_text(PdfInvoiceRenderer().render(attrs.evolve(invoice, paid=False)))
    assert "Status: UNPAID" in text
    assert "Awaiting payment." in text


def test_a4_page_and_metadata(invoice: InvoiceData) -> None:
    reader = PdfReader(io.BytesIO(PdfInvoiceRenderer().render(invoice)))
    (page,) = reader.pages
    assert (float(page.mediabox.width), float(page.mediabox.height)) == pytest.approx(A4_POINTS)
    meta = reader.metadata
    assert meta is not None
    assert meta.title == "Invoice SKN-20261201-ABCD1234"
    assert meta.creation_date is not None
    assert meta.creation_date.date() == invoice.issued_at.date()


def test_the_same_invoice_renders_the_same_bytes(invoice: InvoiceData) -> None:
    renderer = PdfInvoiceRenderer()
    assert renderer.render(invoice) == renderer.render(invoice)


def test_text_outside_latin1_is_folded_not_fatal(invoice: InvoiceData) -> None:
    item = OrderItem(
        product_id=9, name="Krim \u201cMalam\u201d \u2013 精华", quantity=1, unit_price_rupiah=5_000
    )
    data = attrs.evolve(invoice, items=(item,), total_rupiah=5_000, customer_email="é@x.test")
    text = pdf_text(PdfInvoiceRenderer().render(data))
    assert 'Krim "Malam" - ??' in text
    assert "é@x.test" in text


def test_latin1_folds_compatibility_forms() -> None:
    assert latin1("\ufb01ne\u2122 \u2026") == "fineTM ..."
    assert latin1("Sérum") == "Sérum"


def test_a_long_order_flows_onto_more_pages(invoice: InvoiceData) -> None:
    items = tuple(
        OrderItem(product_id=i, name=f"Product number {i}", quantity=1, unit_price_rupiah=1_000)
        for i in range(1, 121)
    )
    pdf = PdfInvoiceRenderer().render(attrs.evolve(invoice, items=items, total_rupiah=120_000))
    assert len(PdfReader(io.BytesIO(pdf)).pages) > 1
    text = pdf_text(pdf)
    for item in items:
        assert f"{item.name} 1 Rp 1.000 Rp 1.000" in text
    assert "Total Rp 120.000" in text


words = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=12)
names = st.lists(words, min_size=1, max_size=3).map(" ".join)


@settings(max_examples=25, deadline=None)
@given(
    lines=st.lists(
        st.tuples(names, st.integers(1, 99), st.integers(0, 10**9)), min_size=1, max_size=6
    )
)
def test_every_item_and_the_total_are_in_the_text(
    lines: list[tuple[str, int, int]],
) -> None:
    items = tuple(OrderItem(i, name, qty, price) for i, (name, qty, price) in enumerate(lines, 1))
    total = sum(item.line_total_rupiah for item in items)
    data = InvoiceData("SKN-X", ISSUED, "a@b.test", items, total, paid=True)
    text = pdf_text(PdfInvoiceRenderer().render(data))
    for item in items:
        assert item.name in text
    assert f"Total Rp {total:,}".replace(",", ".") in text


def test_the_package_formats_rupiah_with_the_core_function() -> None:
    assert skincare_invoice.format_rupiah is format_rupiah
