"""Helpers of the e-mail tests: addresses, aiosmtpd handlers, a free port."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

SENDER = "Skincare Shop <shop@skincare.test>"
USERNAME, PASSWORD = "mailer", "s3cret"


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Inbox:
    """An aiosmtpd handler that keeps every envelope it accepts."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    async def handle_DATA(  # noqa: N802 (aiosmtpd's hook name)
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        self.envelopes.append(envelope)
        return "250 OK queued"


class Refuse:
    """An aiosmtpd handler that answers `reply` at the RCPT or DATA stage."""

    def __init__(self, stage: str, reply: str) -> None:
        self.stage = stage
        self.reply = reply

    async def handle_RCPT(  # noqa: N802 (aiosmtpd's hook name)
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        if self.stage == "RCPT":
            return self.reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802 (aiosmtpd's hook name)
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        return self.reply if self.stage == "DATA" else "250 OK"


StartServer = Callable[..., int]


def authenticate(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
        USERNAME.encode(),
        PASSWORD.encode(),
    )
    # handled=False: aiosmtpd then answers 535 itself (its default assumes we replied).
    return AuthResult(success=ok, handled=False)
