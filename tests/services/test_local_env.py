"""signed_payment: the webhook the demo and the end-to-end tests deliver passes the API's check."""

from __future__ import annotations

import json

import pytest

from skincare_http import verify_signature
from skincare_http.errors import InvalidSignature
from skincare_services.local_env import DEV_WEBHOOK_SECRET, signed_payment

ORDER: dict[str, object] = {"order_id": 7, "total_rupiah": 125_000, "order_number": "SKN-1"}


def test_the_body_pays_the_whole_order() -> None:
    webhook = signed_payment(ORDER, "evt-1", timestamp=1_700_000_000)
    assert json.loads(webhook.body) == {
        "event_id": "evt-1",
        "order_id": 7,
        "status": "paid",
        "amount_rupiah": 125_000,
    }


def test_the_headers_sign_the_body_with_the_dev_secret() -> None:
    webhook = signed_payment(ORDER, "evt-1", timestamp=1_700_000_000)
    headers = webhook.headers
    assert headers["X-Timestamp"] == "1700000000"
    assert headers["X-Signature"].startswith("sha256=")
    stamp = verify_signature(
        DEV_WEBHOOK_SECRET, headers["X-Timestamp"], headers["X-Signature"], webhook.body
    )
    assert stamp == 1_700_000_000


def test_another_secret_signs_differently() -> None:
    webhook = signed_payment(ORDER, "evt-1", secret="other", timestamp=1_700_000_000)
    with pytest.raises(InvalidSignature):
        verify_signature(
            DEV_WEBHOOK_SECRET, str(webhook.timestamp), webhook.signature, webhook.body
        )
