"""Payment events, notifications sent (and claims to send them) and invoices stored, on one
unit of work's connection."""

from __future__ import annotations

from datetime import datetime

from psycopg.rows import class_row, kwargs_row

from skincare_core.shop.errors import AlreadyNotified
from skincare_core.shop.models import (
    InvoiceRecord,
    NotificationType,
    Payment,
    PaymentEvent,
    PaymentStatus,
    SendClaim,
)
from skincare_postgres.driver import Driver

# ON CONFLICT names the partial unique index by its columns and predicate.
_ADD_EVENT = (
    "INSERT INTO payments (event_id, order_id, status, amount_rupiah)"
    " VALUES (%(event_id)s, %(order_id)s, %(status)s, %(amount_rupiah)s)"
    " ON CONFLICT (event_id) WHERE event_id IS NOT NULL DO NOTHING RETURNING id"
)
_PAYMENT = (
    "SELECT event_id, order_id, status, amount_rupiah, paid_at FROM payments"
    " WHERE event_id = %(event_id)s"
)
_PAYMENT_FOR_UPDATE = f"{_PAYMENT} FOR UPDATE"
_MARK_PAID = (
    "UPDATE payments SET status = %(status)s, paid_at = %(paid_at)s WHERE event_id = %(event_id)s"
)
_IS_NOTIFIED = (
    "SELECT 1 FROM order_notifications"
    " WHERE order_id = %(order_id)s AND notification_type = %(kind)s AND sent_at IS NOT NULL"
)
# A conflicting row is locked and read at its latest committed version, so of two concurrent
# claims one takes the send. The update always happens (to the same values unless the claim is
# free) so one statement returns the row as it stands: our claim, another live one, or sent.
_CLAIM_IS_FREE = "n.sent_at IS NULL AND n.claimed_until <= %(now)s"
_CLAIM_SEND = (
    "INSERT INTO order_notifications AS n"
    " (order_id, notification_type, sent_at, claim_token, claimed_until)"
    " VALUES (%(order_id)s, %(kind)s, NULL, %(token)s, %(until)s)"
    " ON CONFLICT (order_id, notification_type) DO UPDATE SET"
    f" claim_token = CASE WHEN {_CLAIM_IS_FREE} THEN excluded.claim_token ELSE n.claim_token END,"
    f" claimed_until = CASE WHEN {_CLAIM_IS_FREE}"
    " THEN excluded.claimed_until ELSE n.claimed_until END"
    " RETURNING n.sent_at, n.claim_token, n.claimed_until"
)
_RENEW_SEND = (
    "UPDATE order_notifications SET claimed_until = %(until)s WHERE order_id = %(order_id)s"
    " AND notification_type = %(kind)s AND claim_token = %(token)s AND sent_at IS NULL"
    " RETURNING 1"
)
_RELEASE_SEND = (
    "DELETE FROM order_notifications WHERE order_id = %(order_id)s"
    " AND notification_type = %(kind)s AND claim_token = %(token)s AND sent_at IS NULL"
)
# No unique violation on a duplicate: the transaction stays usable, no savepoint needed.
_MARK_NOTIFIED = (
    "INSERT INTO order_notifications AS n (order_id, notification_type, sent_at)"
    " VALUES (%(order_id)s, %(kind)s, %(sent_at)s)"
    " ON CONFLICT (order_id, notification_type) DO UPDATE SET sent_at = excluded.sent_at"
    " WHERE n.sent_at IS NULL RETURNING 1"
)
_INVOICE = "SELECT order_id, storage_key, created_at FROM invoices WHERE order_id = %(order_id)s"
_ADD_INVOICE = (
    "INSERT INTO invoices (order_id, storage_key, created_at)"
    " VALUES (%(order_id)s, %(storage_key)s, %(created_at)s) ON CONFLICT (order_id) DO NOTHING"
)


def _payment(
    *, event_id: str, order_id: int, status: str, amount_rupiah: int, paid_at: datetime | None
) -> Payment:
    return Payment(
        event_id=event_id,
        order_id=order_id,
        status=PaymentStatus(status),
        amount_rupiah=amount_rupiah,
        paid_at=paid_at,
    )


def _holder(
    *, sent_at: datetime | None, claim_token: str | None, claimed_until: datetime | None
) -> SendClaim | None:
    # The table's check: a row not yet sent always holds a claim.
    if sent_at is not None or claim_token is None or claimed_until is None:
        return None
    return SendClaim(claim_token, claimed_until)


_PAYMENT_ROW = kwargs_row(_payment)
_HOLDER_ROW = kwargs_row(_holder)
_INVOICE_ROW = class_row(InvoiceRecord)


class PostgresPayments:
    """Payment events, unique by event id (partial unique index payments_event_id_idx)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def add_event(self, event: PaymentEvent) -> bool:
        """Store the event unless its event_id exists; True when it was new."""
        params = {
            "event_id": event.event_id,
            "order_id": event.order_id,
            "status": PaymentStatus.PENDING.value,
            "amount_rupiah": event.amount_rupiah,
        }
        return await self._driver.returned_row(_ADD_EVENT, params)

    async def get(self, event_id: str, *, for_update: bool = False) -> Payment | None:
        """The payment, or None; `for_update` locks its row."""
        query = _PAYMENT_FOR_UPDATE if for_update else _PAYMENT
        found = await self._driver.rows(query, {"event_id": event_id}, _PAYMENT_ROW)
        return found[0] if found else None

    async def mark_paid(self, event_id: str, paid_at: datetime) -> None:
        """Record the event as applied."""
        params = {"event_id": event_id, "status": PaymentStatus.PAID.value, "paid_at": paid_at}
        await self._driver.run(_MARK_PAID, params)


class PostgresNotifications:
    """Which e-mails each order already got (UNIQUE order_id + notification_type)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def is_notified(self, order_id: int, kind: NotificationType) -> bool:
        """Whether this notification was recorded."""
        params = {"order_id": order_id, "kind": kind.value}
        return await self._driver.returned_row(_IS_NOTIFIED, params)

    async def claim_send(
        self, order_id: int, kind: NotificationType, claim: SendClaim, now: datetime
    ) -> SendClaim | None:
        """Take the send for `claim` unless a claim live at `now` holds it; None once sent."""
        params = {
            "order_id": order_id,
            "kind": kind.value,
            "token": claim.token,
            "until": claim.until,
            "now": now,
        }
        [row] = await self._driver.rows(_CLAIM_SEND, params, _HOLDER_ROW)
        return row

    async def renew_send(
        self, order_id: int, kind: NotificationType, token: str, until: datetime
    ) -> bool:
        """Move the unsent claim `token` holds to `until`; False if it no longer holds it."""
        params = {"order_id": order_id, "kind": kind.value, "token": token, "until": until}
        return await self._driver.returned_row(_RENEW_SEND, params)

    async def release_send(self, order_id: int, kind: NotificationType, token: str) -> None:
        """Drop the unsent claim `token` holds, if it still does."""
        params = {"order_id": order_id, "kind": kind.value, "token": token}
        await self._driver.run(_RELEASE_SEND, params)

    async def mark_notified(self, order_id: int, kind: NotificationType, sent_at: datetime) -> None:
        """Record it sent, ending any claim; AlreadyNotified if it already was."""
        params = {"order_id": order_id, "kind": kind.value, "sent_at": sent_at}
        if not await self._driver.returned_row(_MARK_NOTIFIED, params):
            raise AlreadyNotified(f"order {order_id} already got {kind.value}")


class PostgresInvoices:
    """One invoice record per order."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def get(self, order_id: int) -> InvoiceRecord | None:
        """The invoice record, or None."""
        found = await self._driver.rows(_INVOICE, {"order_id": order_id}, _INVOICE_ROW)
        return found[0] if found else None

    async def add(self, record: InvoiceRecord) -> None:
        """Record the invoice; a second record for the order is a no-op."""
        params = {
            "order_id": record.order_id,
            "storage_key": record.storage_key,
            "created_at": record.created_at,
        }
        await self._driver.run(_ADD_INVOICE, params)
