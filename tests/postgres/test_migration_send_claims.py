"""The send-claims migration keeps every recorded e-mail; going back drops only unsent claims."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skincare_postgres import downgrade, upgrade
from tests.postgres.statements import run_sql

SEND_CLAIMS = "0003"
"""The revision that added claims to order_notifications."""

_SEED = (
    "INSERT INTO users (email) VALUES ('a@example.test')",
    "INSERT INTO orders (order_number, user_id, status, payment_status, total_rupiah,"
    " idempotency_key) VALUES ('SKN-1', 1, 'pending', 'unpaid', 1000, 'k')",
    "INSERT INTO order_notifications (order_id, notification_type)"
    " VALUES (1, 'order_confirmation')",
)
_UNSENT_CLAIM = (
    "INSERT INTO order_notifications (order_id, notification_type, sent_at, claim_token,"
    " claimed_until) VALUES (1, 'payment_received', NULL, 't', now())"
)
_KINDS = "SELECT notification_type, sent_at IS NOT NULL FROM order_notifications ORDER BY 1"


@pytest.mark.slow
def test_sent_rows_survive_both_ways_and_unsent_claims_are_dropped_going_back(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{SEND_CLAIMS}-1")
    run_sql(url, *_SEED)
    upgrade(url, SEND_CLAIMS)
    run_sql(url, _UNSENT_CLAIM)
    assert run_sql(url, _KINDS) == [
        ("order_confirmation", True),
        ("payment_received", False),
    ]
    downgrade(url, f"{SEND_CLAIMS}-1")
    assert run_sql(url, _KINDS) == [("order_confirmation", True)]
    upgrade(url, SEND_CLAIMS)
    assert run_sql(url, _KINDS) == [("order_confirmation", True)]
