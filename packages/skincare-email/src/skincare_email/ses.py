"""Amazon SES delivery through boto3 (the `ses` extra); calls run in a worker thread.

The rendered MIME message goes out with `send_raw_email`, so both parts and our headers
arrive. Import this module only when the extra is installed.

SES takes no idempotency key (neither `SendRawEmail` nor SESv2 `SendEmail` has one) and
replaces our Message-ID with its own, so a repeated call sends again: the e-mail handler's
send claim is what keeps concurrent deliveries of one job to one call.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP
from typing import TYPE_CHECKING

import anyio
from botocore.exceptions import BotoCoreError, ClientError

from skincare_email.composer import RenderingEmailService
from skincare_email.errors import EmailRejected, EmailTemporarilyUnavailable

if TYPE_CHECKING:
    from types_boto3_ses.client import SESClient

# SES says no to the message itself: retrying the same message cannot succeed.
PERMANENT_CODES = frozenset(
    {
        "MessageRejected",
        "MailFromDomainNotVerifiedException",
        "MailFromDomainNotVerified",
        "InvalidParameterValue",
        "ConfigurationSetDoesNotExist",
    }
)


class SesEmailService(RenderingEmailService):
    """Sends with an SES client (`boto3.client("ses")`) the caller builds and configures."""

    def __init__(self, client: SESClient, sender: str, *, shop_name: str = "Skincare") -> None:
        super().__init__(sender=sender, shop_name=shop_name)
        self._client = client

    async def deliver(self, message: EmailMessage) -> None:
        """Send one message; EmailRejected for SES refusals, otherwise retryable errors."""
        await anyio.to_thread.run_sync(self._deliver_blocking, message)

    def _deliver_blocking(self, message: EmailMessage) -> None:
        try:
            self._client.send_raw_email(
                Source=self.sender,
                Destinations=[str(message["To"])],
                RawMessage={"Data": message.as_bytes(policy=SMTP)},
            )
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in PERMANENT_CODES:
                raise EmailRejected(f"SES refused the message: {code}: {exc}") from exc
            # Throttling, 5xx service errors, sending paused, credentials: not the message's fault.
            raise EmailTemporarilyUnavailable(f"SES: {code}: {exc}") from exc
        except BotoCoreError as exc:
            raise EmailTemporarilyUnavailable(f"SES unreachable: {exc}") from exc
