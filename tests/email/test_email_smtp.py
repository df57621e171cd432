"""SmtpEmailService against a real aiosmtpd server on 127.0.0.1."""

from __future__ import annotations

import email
import email.policy
import socket
import ssl
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.smtp import AuthResult

from skincare_core.jobs.errors import PermanentJobError
from skincare_core.shop.ports import OrderEmail
from skincare_email import EmailRejected, EmailTemporarilyUnavailable, SmtpEmailService
from tests.email.email_support import (
    PASSWORD,
    SENDER,
    USERNAME,
    Inbox,
    Refuse,
    StartServer,
    free_port,
)

pytestmark = pytest.mark.anyio
CUSTOMER = "siti@example.test"


def service(port: int, **kwargs: Any) -> SmtpEmailService:
    kwargs.setdefault("security", "none")
    return SmtpEmailService(host="127.0.0.1", port=port, sender=SENDER, timeout=5.0, **kwargs)


def received(inbox: Inbox) -> EmailMessage:
    (envelope,) = inbox.envelopes
    assert envelope.rcpt_tos == [CUSTOMER]
    assert envelope.mail_from == "shop@skincare.test"
    content = envelope.original_content
    assert isinstance(content, bytes)
    parsed = email.message_from_bytes(content, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


async def test_confirmation_arrives_with_headers_parts_and_total(
    smtp_server: StartServer, order_email: OrderEmail
) -> None:
    inbox = Inbox()
    await service(smtp_server(inbox)).send_order_confirmation(CUSTOMER, order_email)
    message = received(inbox)
    assert message["Subject"] == "Pesanan SKN-20261201-ABCD1234 telah kami terima"
    assert message["From"] == SENDER
    assert message["To"] == CUSTOMER
    assert message["Message-ID"] == "<9f1c2e7a0b4d4c55@skincare.test>"
    plain, page = message.get_body(("plain",)), message.get_body(("html",))
    assert plain is not None
    assert page is not None
    assert "Total: Rp 1.250.000" in plain.get_content()
    assert "Rp 1.250.000" in page.get_content()


async def test_a_resend_carries_the_same_message_id(
    smtp_server: StartServer, order_email: OrderEmail
) -> None:
    inbox = Inbox()
    mailer = service(smtp_server(inbox))
    await mailer.send_payment_received(CUSTOMER, order_email)
    await mailer.send_payment_received(CUSTOMER, order_email)
    ids = {
        email.message_from_bytes(e.original_content or b"")["Message-ID"] for e in inbox.envelopes
    }
    assert len(inbox.envelopes) == 2
    assert ids == {"<9f1c2e7a0b4d4c55@skincare.test>"}


@pytest.mark.parametrize("stage", ["RCPT", "DATA"])
async def test_451_is_retryable(
    smtp_server: StartServer, order_email: OrderEmail, stage: str
) -> None:
    port = smtp_server(Refuse(stage, "451 4.3.0 try later"))
    with pytest.raises(EmailTemporarilyUnavailable, match="451"):
        await service(port).send_order_confirmation(CUSTOMER, order_email)


@pytest.mark.parametrize("stage", ["RCPT", "DATA"])
async def test_550_is_permanent(
    smtp_server: StartServer, order_email: OrderEmail, stage: str
) -> None:
    port = smtp_server(Refuse(stage, "550 5.1.1 no such user"))
    with pytest.raises(EmailRejected, match="550") as caught:
        await service(port).send_order_confirmation(CUSTOMER, order_email)
    assert isinstance(caught.value, PermanentJobError)


async def test_a_closed_port_is_retryable(order_email: OrderEmail) -> None:
    with pytest.raises(EmailTemporarilyUnavailable, match="ConnectionRefused"):
        await service(free_port()).send_order_confirmation(CUSTOMER, order_email)


async def test_starttls_with_login(
    smtp_server: StartServer,
    order_email: OrderEmail,
    server_tls: ssl.SSLContext,
    client_tls: ssl.SSLContext,
    authenticator: Callable[..., AuthResult],
) -> None:
    inbox = Inbox()
    port = smtp_server(
        inbox, tls_context=server_tls, require_starttls=True, authenticator=authenticator
    )
    mailer = service(
        port, security="starttls", ssl_context=client_tls, username=USERNAME, password=PASSWORD
    )
    await mailer.send_order_confirmation(CUSTOMER, order_email)
    assert received(inbox)["Subject"].startswith("Pesanan")


async def test_wrong_password_is_retryable_not_permanent(
    smtp_server: StartServer,
    order_email: OrderEmail,
    server_tls: ssl.SSLContext,
    client_tls: ssl.SSLContext,
    authenticator: Callable[..., AuthResult],
) -> None:
    # Credentials are our configuration, not the message's fault: fix them and the job goes out.
    port = smtp_server(Inbox(), tls_context=server_tls, authenticator=authenticator)
    mailer = service(
        port, security="starttls", ssl_context=client_tls, username=USERNAME, password="wrong"
    )
    with pytest.raises(EmailTemporarilyUnavailable, match="535"):
        await mailer.send_order_confirmation(CUSTOMER, order_email)


async def test_implicit_tls(
    smtp_server: StartServer,
    order_email: OrderEmail,
    server_tls: ssl.SSLContext,
    client_tls: ssl.SSLContext,
) -> None:
    inbox = Inbox()
    port = smtp_server(inbox, ssl_context=server_tls)
    await service(port, security="tls", ssl_context=client_tls).send_payment_received(
        CUSTOMER, order_email
    )
    assert received(inbox)["Message-ID"] == "<9f1c2e7a0b4d4c55@skincare.test>"


async def test_an_untrusted_certificate_is_retryable(
    smtp_server: StartServer, order_email: OrderEmail, server_tls: ssl.SSLContext
) -> None:
    port = smtp_server(Inbox(), ssl_context=server_tls)
    with pytest.raises(EmailTemporarilyUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
        await service(port, security="tls").send_order_confirmation(CUSTOMER, order_email)


async def test_a_silent_server_times_out_as_retryable(order_email: OrderEmail) -> None:
    with socket.socket() as listener:
        # Accepts connections (the backlog does) but never says hello.
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        mailer = SmtpEmailService(
            host="127.0.0.1", port=port, sender=SENDER, security="none", timeout=0.3
        )
        with pytest.raises(EmailTemporarilyUnavailable, match="timed out"):
            await mailer.send_order_confirmation(CUSTOMER, order_email)


def test_unknown_security_is_refused() -> None:
    with pytest.raises(ValueError, match="security"):
        SmtpEmailService(host="h", port=1, sender=SENDER, security="ssl")  # type: ignore[arg-type]


async def test_starttls_against_a_server_without_it_is_retryable(
    smtp_server: StartServer, order_email: OrderEmail, client_tls: ssl.SSLContext
) -> None:
    # A plain server cannot be upgraded: never fall back to sending in clear text.
    inbox = Inbox()
    port = smtp_server(inbox)
    mailer = service(port, security="starttls", ssl_context=client_tls)
    with pytest.raises(EmailTemporarilyUnavailable, match="STARTTLS"):
        await mailer.send_order_confirmation(CUSTOMER, order_email)
    assert inbox.envelopes == []
