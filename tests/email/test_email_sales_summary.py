"""The daily sales summary e-mail: both languages, both parts, rupiah, through a real transport."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, date, datetime
from email.message import EmailMessage
from pathlib import Path

import attrs
import pytest

from skincare_core.shop.models import DailySales, ProductSales
from skincare_core.shop.ports import SalesSummaryEmail
from skincare_email import MaildirEmailService, render_sales_summary
from tests.email.email_support import SENDER

SENT_AT = datetime(2026, 12, 4, 0, 0, 2, tzinfo=UTC)
ADMIN = "admin@toko.test"
SALES = DailySales(
    date(2026, 12, 3),
    orders=12,
    revenue_rupiah=3_450_000,
    top_products=(
        ProductSales(7, "Serum Vitamin C 30ml", 9, 1_125_000),
        ProductSales(3, "Krim <Malam> & Siang", 4, 600_000),
    ),
)
SUMMARY = SalesSummaryEmail(SALES, "daily-sales-summary-20261204T000000Z")
SUBJECTS = {
    "id": "Ringkasan penjualan Skincare 2026-12-03",
    "en": "Skincare sales summary for 2026-12-03",
}


def render(data: SalesSummaryEmail) -> EmailMessage:
    return render_sales_summary(data, to=ADMIN, sender=SENDER, sent_at=SENT_AT)


def parts(message: EmailMessage) -> tuple[str, str]:
    """Plain and HTML bodies, read back from the wire form as a mail client would."""
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    plain, page = parsed.get_body(("plain",)), parsed.get_body(("html",))
    assert plain is not None
    assert page is not None
    return str(plain.get_content()), str(page.get_content())


@pytest.mark.parametrize("language", ["id", "en"])
def test_both_parts_hold_orders_revenue_and_top_products(language: str) -> None:
    message = render(attrs.evolve(SUMMARY, language=language))
    text, page = parts(message)
    assert message["Subject"] == SUBJECTS[language]
    assert message["Content-Language"] == language
    assert f'<html lang="{language}">' in page
    for body in (text, page):
        assert "2026-12-03" in body
        assert "12" in body
        assert "Rp 3.450.000" in body
        assert "Serum Vitamin C 30ml" in body
        assert "Rp 1.125.000" in body
    assert "1. Serum Vitamin C 30ml: 9 pcs, Rp 1.125.000" in text
    assert "2. Krim <Malam> & Siang: 4 pcs, Rp 600.000" in text
    assert "Krim &lt;Malam&gt; &amp; Siang" in page
    assert text.index("Serum") < text.index("Krim")


def test_headers_name_the_report_and_the_message_id_is_the_jobs() -> None:
    message = render(SUMMARY)
    assert (message["From"], message["To"]) == (SENDER, ADMIN)
    assert message["Message-ID"] == "<daily-sales-summary-20261204T000000Z@skincare.test>"
    assert message["X-Skincare-Notification"] == "sales_summary"
    assert message["X-Skincare-Report"] == "2026-12-03"
    assert render(SUMMARY).as_bytes() == message.as_bytes()


@pytest.mark.parametrize(
    ("language", "line"), [("id", "Belum ada penjualan."), ("en", "No sales.")]
)
def test_a_day_without_sales_says_zero(language: str, line: str) -> None:
    empty = DailySales(date(2026, 12, 3), 0, 0, ())
    text, page = parts(render(SalesSummaryEmail(empty, "job-1", language)))
    assert "Rp 0" in text
    assert line in text
    assert line in page
    assert ("Pesanan dibayar: 0" if language == "id" else "Paid orders: 0") in text


def test_an_unknown_language_falls_back_to_indonesian() -> None:
    assert render(attrs.evolve(SUMMARY, language="fr"))["Subject"] == SUBJECTS["id"]


@pytest.mark.anyio
async def test_the_maildir_transport_delivers_it(tmp_path: Path) -> None:
    await MaildirEmailService(tmp_path, SENDER).send_sales_summary(ADMIN, SUMMARY)
    [file] = (tmp_path / "new").iterdir()
    parsed = email.message_from_bytes(file.read_bytes(), policy=email.policy.default)
    assert (parsed["To"], parsed["Subject"]) == (ADMIN, SUBJECTS["id"])
