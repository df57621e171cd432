"""Rendering the order e-mails: a pure function of the data, in Indonesian and English."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime
from email.message import EmailMessage

import attrs
import pytest

import skincare_email
from skincare_core.shop.models import NotificationType, OrderItem
from skincare_core.shop.money import format_rupiah
from skincare_core.shop.ports import OrderEmail
from skincare_email import message_id_for, render_email
from tests.email.email_support import SENDER

SENT_AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
SUBJECTS = {
    (NotificationType.ORDER_CONFIRMATION, "id"): "Pesanan SKN-20261201-ABCD1234 telah kami terima",
    (NotificationType.ORDER_CONFIRMATION, "en"): "We received your order SKN-20261201-ABCD1234",
    (NotificationType.PAYMENT_RECEIVED, "id"): "Pembayaran pesanan SKN-20261201-ABCD1234 telah "
    "diterima",
    (NotificationType.PAYMENT_RECEIVED, "en"): "Payment received for order SKN-20261201-ABCD1234",
}


def render(kind: NotificationType, data: OrderEmail) -> EmailMessage:
    return render_email(kind, data, to="siti@example.test", sender=SENDER, sent_at=SENT_AT)


def parts(message: EmailMessage) -> tuple[str, str]:
    """Plain and HTML bodies, read back from the wire form as a mail client would."""
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    plain, page = parsed.get_body(("plain",)), parsed.get_body(("html",))
    assert plain is not None
    assert page is not None
    return str(plain.get_content()), str(page.get_content())


@pytest.mark.parametrize(("kind", "language"), list(SUBJECTS))
def test_both_parts_hold_order_items_and_rupiah_total(
    order_email: OrderEmail, kind: NotificationType, language: str
) -> None:
    message = render(kind, attrs.evolve(order_email, language=language))
    text, page = parts(message)
    assert message["Subject"] == SUBJECTS[kind, language]
    assert message["Content-Language"] == language
    assert message.get_content_type() == "multipart/alternative"
    for body in (text, page):
        assert "SKN-20261201-ABCD1234" in body
        assert "Rp 1.250.000" in body
        assert "Serum Vitamin C 30ml" in body
        assert "Rp 125.000" in body
        assert "Rp 250.000" in body
    assert "- 2 x Serum Vitamin C 30ml @ Rp 125.000 = Rp 250.000" in text
    assert "- 1 x Toner Centella @ Rp 1.000.000 = Rp 1.000.000" in text
    assert f'<html lang="{language}">' in page


def test_headers(order_email: OrderEmail) -> None:
    message = render(NotificationType.ORDER_CONFIRMATION, order_email)
    assert message["From"] == SENDER
    assert message["To"] == "siti@example.test"
    assert message["Date"] == "Tue, 01 Dec 2026 09:30:00 +0000"
    assert message["Message-ID"] == "<9f1c2e7a0b4d4c55@skincare.test>"
    assert message["X-Skincare-Order"] == "SKN-20261201-ABCD1234"
    assert message["X-Skincare-Notification"] == "order_confirmation"


def test_message_id_is_stable_per_job_and_differs_between_jobs(order_email: OrderEmail) -> None:
    first = render(NotificationType.PAYMENT_RECEIVED, order_email)
    again = render(NotificationType.PAYMENT_RECEIVED, order_email)
    other = render(
        NotificationType.PAYMENT_RECEIVED, attrs.evolve(order_email, idempotency_key="other-job")
    )
    assert first["Message-ID"] == again["Message-ID"]
    assert first["Message-ID"] != other["Message-ID"]


def test_unsafe_job_ids_are_hashed_into_a_valid_message_id() -> None:
    value = message_id_for("job id with spaces <and> @ signs", "shop@skincare.test")
    assert value == message_id_for("job id with spaces <and> @ signs", "shop@skincare.test")
    local, _, domain = value.strip("<>").partition("@")
    assert local.isalnum()
    assert domain == "skincare.test"


def test_names_are_escaped_in_html_and_kept_in_text(order_email: OrderEmail) -> None:
    item = OrderItem(product_id=3, name="Krim <Malam> & Siang", quantity=1, unit_price_rupiah=5)
    data = attrs.evolve(order_email, items=(item,), total_rupiah=5)
    text, page = parts(render(NotificationType.ORDER_CONFIRMATION, data))
    assert "Krim &lt;Malam&gt; &amp; Siang" in page
    assert "<Malam>" not in page
    assert "Krim <Malam> & Siang" in text


def test_non_ascii_names_survive_the_wire(order_email: OrderEmail) -> None:
    item = OrderItem(product_id=4, name="Sérum Æ \u2013 精华", quantity=3, unit_price_rupiah=10_000)
    data = attrs.evolve(order_email, items=(item,), total_rupiah=30_000, language="en")
    text, page = parts(render(NotificationType.PAYMENT_RECEIVED, data))
    assert "Sérum Æ \u2013 精华" in text
    assert "Sérum Æ \u2013 精华" in page
    assert "Rp 30.000" in text


def test_unknown_language_falls_back_to_indonesian(order_email: OrderEmail) -> None:
    message = render(NotificationType.ORDER_CONFIRMATION, attrs.evolve(order_email, language="fr"))
    assert message["Subject"] == SUBJECTS[NotificationType.ORDER_CONFIRMATION, "id"]
    assert message["Content-Language"] == "id"


def test_rendering_is_pure(order_email: OrderEmail) -> None:
    first = render(NotificationType.ORDER_CONFIRMATION, order_email)
    second = render(NotificationType.ORDER_CONFIRMATION, order_email)
    assert first.as_bytes() == second.as_bytes()


def test_the_package_formats_rupiah_with_the_core_function() -> None:
    assert skincare_email.format_rupiah is format_rupiah
