"""The environment `skincare dev` and `skincare demo` give their child processes.

Also the payment gateway's side of that environment: a paid webhook signed with the dev secret,
as the demo and the end-to-end tests deliver it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

import attrs

from skincare_http.webhook_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_webhook

DEV_JWT_SECRET = "dev-only-jwt-secret-never-use-in-production"
DEV_WEBHOOK_SECRET = "dev-only-webhook-secret-never-use-in-production"


def local_env(
    *,
    database_url: str,
    home: Path,
    port: int,
    sqs: tuple[str, str] | None = None,
) -> dict[str, str]:
    """SKINCARE_* (and, for SQS on moto, AWS_*) variables for a local API and worker."""
    env = {
        "SKINCARE_DATABASE_URL": database_url,
        "SKINCARE_JWT_SECRET": DEV_JWT_SECRET,
        "SKINCARE_WEBHOOK_SECRET": DEV_WEBHOOK_SECRET,
        "SKINCARE_MAILDIR": str(home / "mail"),
        "SKINCARE_INVOICE_DIR": str(home / "invoices"),
        "SKINCARE_API_PORT": str(port),
        "SKINCARE_QUEUE": "postgres",
    }
    if sqs is not None:
        endpoint, prefix = sqs
        env |= {
            "SKINCARE_QUEUE": "sqs",
            "SKINCARE_SQS_QUEUE_PREFIX": prefix,
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    return env


@attrs.frozen
class SignedWebhook:
    """A webhook as the gateway sends it: the raw body and the signature over it."""

    body: bytes
    timestamp: int
    signature: str

    @property
    def headers(self) -> dict[str, str]:
        """The headers to POST with `body`."""
        return {
            TIMESTAMP_HEADER: str(self.timestamp),
            SIGNATURE_HEADER: self.signature,
            "Content-Type": "application/json",
        }


def signed_payment(
    order: Mapping[str, object],
    event_id: str,
    *,
    secret: str = DEV_WEBHOOK_SECRET,
    timestamp: int | None = None,
) -> SignedWebhook:
    """A `paid` webhook for the whole of `order` (the checkout's response body), signed now."""
    body = json.dumps(
        {
            "event_id": event_id,
            "order_id": order["order_id"],
            "status": "paid",
            "amount_rupiah": order["total_rupiah"],
        }
    ).encode()
    stamp = int(time.time()) if timestamp is None else timestamp
    return SignedWebhook(body, stamp, sign_webhook(secret, stamp, body))
