"""SMTP delivery with the standard library, run in a worker thread."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from typing import Literal

import anyio

from skincare_email.composer import RenderingEmailService
from skincare_email.errors import EmailRejected, EmailTemporarilyUnavailable

Security = Literal["none", "starttls", "tls"]


class SmtpEmailService(RenderingEmailService):
    """Sends through any SMTP provider; plain, STARTTLS or implicit TLS, login when configured.

    `timeout` bounds the connect and every socket read/write of the session.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        sender: str,
        username: str | None = None,
        password: str | None = None,
        security: Security = "starttls",
        timeout: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
        shop_name: str = "Skincare",
    ) -> None:
        super().__init__(sender=sender, shop_name=shop_name)
        if security not in ("none", "starttls", "tls"):
            raise ValueError(f"security must be none, starttls or tls, not {security!r}")
        self._host = host
        self._port = port
        self._username = username
        self._password = password
        self._security = security
        self._timeout = timeout
        self._ssl_context = ssl_context

    async def deliver(self, message: EmailMessage) -> None:
        """Send one message; EmailTemporarilyUnavailable or EmailRejected on failure."""
        await anyio.to_thread.run_sync(self._deliver_blocking, message)

    def _deliver_blocking(self, message: EmailMessage) -> None:
        try:
            with self._connect() as session:
                if self._username is not None:
                    session.login(self._username, self._password or "")
                session.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            raise _from_codes([code for code, _ in exc.recipients.values()], exc) from exc
        except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
            raise _from_codes([exc.smtp_code], exc) from exc
        except (smtplib.SMTPException, OSError) as exc:
            # Disconnects, refused or timed-out connections, TLS and login trouble: none of
            # them is the message's fault, so the job is retried and dead-lettered only late.
            raise EmailTemporarilyUnavailable(f"SMTP {self._host}:{self._port}: {exc!r}") from exc

    def _connect(self) -> smtplib.SMTP:
        context = self._ssl_context or ssl.create_default_context()
        if self._security == "tls":
            return smtplib.SMTP_SSL(self._host, self._port, timeout=self._timeout, context=context)
        session = smtplib.SMTP(self._host, self._port, timeout=self._timeout)
        try:
            if self._security == "starttls":
                session.starttls(context=context)
        except BaseException:
            session.close()
            raise
        return session


def _from_codes(codes: list[int], exc: Exception) -> Exception:
    """Permanent when every answer is a 5xx, otherwise worth another try."""
    if codes and all(500 <= code < 600 for code in codes):
        return EmailRejected(f"SMTP rejected the message: {exc}")
    return EmailTemporarilyUnavailable(f"SMTP deferred the message: {exc}")
