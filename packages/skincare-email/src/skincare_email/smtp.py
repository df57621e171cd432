"""SMTP delivery with the standard library, run in a worker thread.

SMTP has no idempotency key: a repeated send is a second message, recognisable by its
Message-ID (built from the job id); the e-mail handler's send claim prevents the repeat.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.message import EmailMessage
from typing import Literal

import anyio

from skincare_email.composer import RenderingEmailService
from skincare_email.errors import EmailRejected, EmailTemporarilyUnavailable

Security = Literal["none", "starttls", "tls"]


class SmtpEmailService(RenderingEmailService):
    """Sends through any SMTP provider; plain, STARTTLS or implicit TLS, login when configured.

    `timeout` bounds the connect and every socket read/write of the session. The EHLO name
    is `local_hostname`, or this host's FQDN looked up once (smtplib would look it up per send).
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
        local_hostname: str | None = None,
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
        self._local_hostname = local_hostname

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
        name = self._helo_name()
        if self._security == "tls":
            return smtplib.SMTP_SSL(
                self._host,
                self._port,
                local_hostname=name,
                timeout=self._timeout,
                context=self._context(),
            )
        session = smtplib.SMTP(self._host, self._port, local_hostname=name, timeout=self._timeout)
        try:
            if self._security == "starttls":
                session.starttls(context=self._context())
        except BaseException:
            session.close()
            raise
        return session

    def _context(self) -> ssl.SSLContext:
        # Loading the system CA store costs tens of milliseconds: do it once, not per message.
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def _helo_name(self) -> str:
        if self._local_hostname is None:
            self._local_hostname = socket.getfqdn()
        return self._local_hostname


def _from_codes(codes: list[int], exc: Exception) -> Exception:
    """Permanent when every answer is a 5xx, otherwise worth another try."""
    if codes and all(500 <= code < 600 for code in codes):
        return EmailRejected(f"SMTP rejected the message: {exc}")
    return EmailTemporarilyUnavailable(f"SMTP deferred the message: {exc}")
