"""Invoice PDFs with fpdf2: one A4 page (more when the item list is long)."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from skincare_core.shop.money import format_rupiah
from skincare_core.shop.ports import InvoiceData

if TYPE_CHECKING:
    from fpdf import FPDF

_FONT = "Helvetica"
_COLUMNS = (90, 20, 35, 35)
# Typography that shop copy often holds and latin-1 lacks, so names stay readable.
_PUNCTUATION = str.maketrans(
    {
        "\u2013": "-",
        "\u2014": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2022": "*",
        "\u2026": "...",
    }
)


def latin1(text: str) -> str:
    """`text` in what a core PDF font can show: compatibility forms folded, the rest as `?`."""
    folded = unicodedata.normalize("NFKC", text).translate(_PUNCTUATION)
    return folded.encode("latin-1", "replace").decode("latin-1")


class PdfInvoiceRenderer:
    """Renders InvoiceData as a PDF; the same data always gives the same bytes."""

    def __init__(self, shop_name: str = "Skincare") -> None:
        self.shop_name = shop_name

    def render(self, invoice: InvoiceData) -> bytes:
        """The invoice PDF."""
        # fpdf takes a good part of a second to import: a worker pays it at its first invoice,
        # not at every start.
        from fpdf import FPDF

        pdf = FPDF(orientation="portrait", unit="mm", format="A4")
        self._metadata(pdf, invoice)
        pdf.add_page()
        self._header(pdf, invoice)
        self._items(pdf, invoice)
        self._footer(pdf, invoice)
        return bytes(pdf.output())

    def _metadata(self, pdf: FPDF, invoice: InvoiceData) -> None:
        # Fixed dates and names keep the bytes stable, so a re-render is byte-identical.
        pdf.set_creation_date(invoice.issued_at)
        pdf.set_title(latin1(f"Invoice {invoice.order_number}"))
        pdf.set_author(latin1(self.shop_name))
        pdf.set_creator("skincare-invoice")
        pdf.set_producer("skincare-invoice")
        pdf.set_lang("en")
        pdf.set_auto_page_break(auto=True, margin=15)

    def _header(self, pdf: FPDF, invoice: InvoiceData) -> None:
        pdf.set_font(_FONT, style="B", size=18)
        pdf.cell(0, 10, latin1(self.shop_name), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font(_FONT, style="B", size=14)
        pdf.cell(0, 9, latin1(f"INVOICE {invoice.order_number}"), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font(_FONT, size=10)
        for label, value in (
            ("Invoice number", invoice.order_number),
            ("Date", f"{invoice.issued_at:%Y-%m-%d}"),
            ("Customer", invoice.customer_email),
            ("Status", "PAID" if invoice.paid else "UNPAID"),
        ):
            pdf.cell(40, 6, f"{label}:")
            pdf.cell(0, 6, latin1(value), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)

    def _items(self, pdf: FPDF, invoice: InvoiceData) -> None:
        pdf.set_font(_FONT, size=10)
        with pdf.table(
            col_widths=_COLUMNS,
            width=sum(_COLUMNS),
            align="LEFT",
            text_align=("LEFT", "RIGHT", "RIGHT", "RIGHT"),
            first_row_as_headings=True,
        ) as table:
            table.row(("Item", "Qty", "Unit price", "Line total"))
            for item in invoice.items:
                table.row(
                    (
                        latin1(item.name),
                        str(item.quantity),
                        format_rupiah(item.unit_price_rupiah),
                        format_rupiah(item.line_total_rupiah),
                    )
                )

    def _footer(self, pdf: FPDF, invoice: InvoiceData) -> None:
        pdf.ln(3)
        pdf.set_font(_FONT, style="B", size=12)
        pdf.cell(sum(_COLUMNS[:3]), 8, "Total")
        pdf.cell(
            _COLUMNS[3],
            8,
            format_rupiah(invoice.total_rupiah),
            align="R",
            new_x="LMARGIN",
            new_y="NEXT",
        )
        pdf.set_font(_FONT, size=9)
        note = "Paid in full. Thank you!" if invoice.paid else "Awaiting payment."
        pdf.cell(0, 6, note, new_x="LMARGIN", new_y="NEXT")
