"""The daily sales summary e-mail, rendered like the order e-mails (`messages.py`): a pure
function of the data, from the package's bilingual templates."""

from __future__ import annotations

import html
from datetime import datetime
from email.message import EmailMessage

from skincare_core.shop.models import ProductSales
from skincare_core.shop.money import format_rupiah
from skincare_core.shop.ports import SalesSummaryEmail
from skincare_email.messages import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    Rendered,
    assemble,
    split_subject,
    template,
)

SALES_SUMMARY = "sales_summary"
"""The templates' name, and the X-Skincare-Notification header's value."""
_NO_SALES = {"id": "Belum ada penjualan.", "en": "No sales."}


def render_sales_summary(
    data: SalesSummaryEmail,
    *,
    to: str,
    sender: str,
    sent_at: datetime,
    shop_name: str = "Skincare",
) -> EmailMessage:
    """The complete summary message, in the data's language (Indonesian when unknown)."""
    language = data.language if data.language in LANGUAGES else DEFAULT_LANGUAGE
    day = data.sales.day.isoformat()
    headers = {"X-Skincare-Report": day, "X-Skincare-Notification": SALES_SUMMARY}
    return assemble(
        _bodies(data, language, shop_name),
        to=to,
        sender=sender,
        sent_at=sent_at,
        idempotency_key=data.idempotency_key,
        headers=headers,
    )


def _bodies(data: SalesSummaryEmail, language: str, shop_name: str) -> Rendered:
    sales = data.sales
    fields = {
        "shop_name": shop_name,
        "day": sales.day.isoformat(),
        "orders": str(sales.orders),
        "revenue": format_rupiah(sales.revenue_rupiah),
    }
    products = sales.top_products
    text_rows = _text_rows(products) if products else _NO_SALES[language]
    subject, text = split_subject(
        template(SALES_SUMMARY, language, "txt").substitute(fields, products=text_rows)
    )
    page = template(SALES_SUMMARY, language, "html").substitute(
        {key: html.escape(value) for key, value in fields.items()},
        products=_html_rows(products, language),
        subject=html.escape(subject),
    )
    return Rendered(subject, text, page, language)


def _text_rows(products: tuple[ProductSales, ...]) -> str:
    return "\n".join(
        f"{rank}. {p.name}: {p.quantity} pcs, {format_rupiah(p.revenue_rupiah)}"
        for rank, p in enumerate(products, start=1)
    )


def _html_rows(products: tuple[ProductSales, ...], language: str) -> str:
    if not products:
        return f'<tr><td colspan="4">{html.escape(_NO_SALES[language])}</td></tr>'
    cell = '<td align="right">{}</td>'
    return "\n".join(
        "<tr>"
        + cell.format(rank)
        + f"<td>{html.escape(p.name)}</td>"
        + cell.format(p.quantity)
        + cell.format(html.escape(format_rupiah(p.revenue_rupiah)))
        + "</tr>"
        for rank, p in enumerate(products, start=1)
    )
