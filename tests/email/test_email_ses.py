"""SesEmailService against moto's real HTTP server: what SES stored is what we rendered."""

from __future__ import annotations

import email
import email.policy
import json
import urllib.request
import uuid
from email.message import EmailMessage
from typing import Any

import anyio
import attrs
import boto3
import pytest
from botocore.config import Config

from skincare_core.jobs.errors import PermanentJobError
from skincare_core.shop.ports import OrderEmail
from skincare_email import EmailRejected, EmailTemporarilyUnavailable
from skincare_email.ses import SesEmailService
from tests.email.email_support import free_port

pytestmark = pytest.mark.anyio
CUSTOMER = "budi@example.test"


def ses_client(endpoint: str) -> Any:
    return boto3.client("ses", region_name="us-east-1", endpoint_url=endpoint)


def stored_raw_messages(endpoint: str) -> list[dict[str, Any]]:
    """The raw messages moto's SES backend holds, read over its HTTP API."""
    with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=5) as response:
        data = json.load(response)
    messages: list[dict[str, Any]] = data["ses"]["RawMessage"]
    return messages


@pytest.fixture
def verified_sender(moto_endpoint: str) -> str:
    """A sender address SES has verified (fresh per test, so tests do not see each other)."""
    address = f"shop-{uuid.uuid4().hex[:8]}@skincare.test"
    ses_client(moto_endpoint).verify_email_identity(EmailAddress=address)
    return f"Skincare Shop <{address}>"


async def test_the_rendered_message_reaches_ses_whole(
    moto_endpoint: str, verified_sender: str, order_email: OrderEmail
) -> None:
    job_id = uuid.uuid4().hex
    data = attrs.evolve(order_email, idempotency_key=job_id, language="en")
    mailer = SesEmailService(ses_client(moto_endpoint), verified_sender)
    await mailer.send_payment_received(CUSTOMER, data)

    stored = await anyio.to_thread.run_sync(stored_raw_messages, moto_endpoint)
    (mine,) = [m for m in stored if job_id in m["raw_data"]]
    assert mine["source"] == verified_sender
    assert set(mine["destinations"]) == {CUSTOMER}
    message = email.message_from_string(mine["raw_data"], policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    assert message["Subject"] == "Payment received for order SKN-20261201-ABCD1234"
    assert message["Message-ID"] == f"<{job_id}@skincare.test>"
    plain, page = message.get_body(("plain",)), message.get_body(("html",))
    assert plain is not None
    assert page is not None
    assert "Total paid: Rp 1.250.000" in plain.get_content()
    assert "Rp 1.250.000" in page.get_content()


async def test_an_unverified_sender_is_permanent(
    moto_endpoint: str, order_email: OrderEmail
) -> None:
    mailer = SesEmailService(ses_client(moto_endpoint), "nobody-verified-me@elsewhere.test")
    with pytest.raises(EmailRejected, match="MessageRejected") as caught:
        await mailer.send_order_confirmation(CUSTOMER, order_email)
    assert isinstance(caught.value, PermanentJobError)


async def test_an_unreachable_endpoint_is_retryable(order_email: OrderEmail) -> None:
    client = boto3.client(
        "ses",
        region_name="us-east-1",
        endpoint_url=f"http://127.0.0.1:{free_port()}",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}, connect_timeout=1, read_timeout=1),
    )
    mailer = SesEmailService(client, "shop@skincare.test")
    with pytest.raises(EmailTemporarilyUnavailable, match="unreachable"):
        await mailer.send_order_confirmation(CUSTOMER, order_email)
