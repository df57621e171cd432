"""The send-claims migration keeps every recorded e-mail; going back drops only unsent claims."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import create_engine, text

from skincare_postgres import downgrade, upgrade

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


def _run(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run the statements in one transaction; the last one's rows."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            results = [conn.execute(text(sql)) for sql in statements]
            return [tuple(row) for row in results[-1]] if results[-1].returns_rows else []
    finally:
        engine.dispose()


@pytest.mark.slow
def test_sent_rows_survive_both_ways_and_unsent_claims_are_dropped_going_back(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{SEND_CLAIMS}-1")
    _run(url, *_SEED)
    upgrade(url, SEND_CLAIMS)
    _run(url, _UNSENT_CLAIM)
    assert _run(url, _KINDS) == [("order_confirmation", True), ("payment_received", False)]
    downgrade(url, f"{SEND_CLAIMS}-1")
    assert _run(url, _KINDS) == [("order_confirmation", True)]
    upgrade(url, SEND_CLAIMS)
    assert _run(url, _KINDS) == [("order_confirmation", True)]
