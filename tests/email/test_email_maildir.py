"""MaildirEmailService: every e-mail is a file in `new/` that parses back whole."""

from __future__ import annotations

import email
import email.policy
import mailbox
from email.message import EmailMessage
from pathlib import Path

import pytest

from skincare_core.shop.ports import OrderEmail
from skincare_email import MaildirEmailService
from tests.email.email_support import SENDER

pytestmark = pytest.mark.anyio


async def test_each_message_is_a_file_that_parses_back(
    tmp_path: Path, order_email: OrderEmail
) -> None:
    mailer = MaildirEmailService(tmp_path / "mail", SENDER)
    await mailer.send_order_confirmation("siti@example.test", order_email)
    await mailer.send_payment_received("siti@example.test", order_email)

    files = sorted((tmp_path / "mail" / "new").iterdir())
    assert len(files) == 2
    assert list((tmp_path / "mail" / "tmp").iterdir()) == []
    parsed = [email.message_from_bytes(f.read_bytes(), policy=email.policy.default) for f in files]
    subjects = {str(message["Subject"]) for message in parsed}
    assert subjects == {
        "Pesanan SKN-20261201-ABCD1234 telah kami terima",
        "Pembayaran pesanan SKN-20261201-ABCD1234 telah diterima",
    }
    for message in parsed:
        assert isinstance(message, EmailMessage)
        assert message["To"] == "siti@example.test"
        plain = message.get_body(("plain",))
        assert plain is not None
        assert "Rp 1.250.000" in plain.get_content()
        assert message.get_body(("html",)) is not None


async def test_the_maildir_is_readable_with_mailbox(
    tmp_path: Path, order_email: OrderEmail
) -> None:
    await MaildirEmailService(tmp_path, SENDER).send_order_confirmation("a@b.test", order_email)
    (message,) = list(mailbox.Maildir(tmp_path, create=False))
    assert message["Message-ID"] == "<9f1c2e7a0b4d4c55@skincare.test>"
