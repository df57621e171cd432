"""Payment events, notifications sent and invoices stored, on one unit of work's connection."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_core.errors import AlreadyNotified
from skincare_core.models import (
    InvoiceRecord,
    NotificationType,
    Payment,
    PaymentEvent,
    PaymentStatus,
)
from skincare_postgres.schema import invoices, order_notifications, payments


class PostgresPayments:
    """Payment events, unique by event id (partial unique index payments_event_id_idx)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def add_event(self, event: PaymentEvent) -> bool:
        """Store the event unless its event_id exists; True when it was new."""
        statement = (
            pg_insert(payments)
            .values(
                event_id=event.event_id,
                order_id=event.order_id,
                status=PaymentStatus.PENDING.value,
                amount_rupiah=event.amount_rupiah,
            )
            .on_conflict_do_nothing(
                index_elements=[payments.c.event_id], index_where=text("event_id IS NOT NULL")
            )
            .returning(payments.c.id)
        )
        return (await self._conn.execute(statement)).first() is not None

    async def get(self, event_id: str, *, for_update: bool = False) -> Payment | None:
        """The payment, or None; `for_update` locks its row."""
        query = select(
            payments.c.event_id,
            payments.c.order_id,
            payments.c.status,
            payments.c.amount_rupiah,
            payments.c.paid_at,
        ).where(payments.c.event_id == event_id)
        if for_update:
            query = query.with_for_update()
        row = (await self._conn.execute(query)).first()
        if row is None:
            return None
        status = PaymentStatus(row.status)
        return Payment(row.event_id, row.order_id, status, row.amount_rupiah, row.paid_at)

    async def mark_paid(self, event_id: str, paid_at: datetime) -> None:
        """Record the event as applied."""
        await self._conn.execute(
            update(payments)
            .where(payments.c.event_id == event_id)
            .values(status=PaymentStatus.PAID.value, paid_at=paid_at)
        )


class PostgresNotifications:
    """Which e-mails each order already got (UNIQUE order_id + notification_type)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def is_notified(self, order_id: int, kind: NotificationType) -> bool:
        """Whether this notification was recorded."""
        query = select(order_notifications.c.id).where(
            order_notifications.c.order_id == order_id,
            order_notifications.c.notification_type == kind.value,
        )
        return (await self._conn.execute(query)).first() is not None

    async def mark_notified(self, order_id: int, kind: NotificationType, sent_at: datetime) -> None:
        """Record it; AlreadyNotified if it already was (the transaction stays usable)."""
        row = {"order_id": order_id, "notification_type": kind.value, "sent_at": sent_at}
        try:
            # A savepoint, so the unique violation does not abort the whole transaction.
            async with self._conn.begin_nested():
                await self._conn.execute(insert(order_notifications).values(row))
        except IntegrityError as error:
            raise AlreadyNotified(f"order {order_id} already got {kind.value}") from error


class PostgresInvoices:
    """One invoice record per order."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def get(self, order_id: int) -> InvoiceRecord | None:
        """The invoice record, or None."""
        query = select(invoices).where(invoices.c.order_id == order_id)
        row = (await self._conn.execute(query)).first()
        return None if row is None else InvoiceRecord(row.order_id, row.storage_key, row.created_at)

    async def add(self, record: InvoiceRecord) -> None:
        """Record the invoice; a second record for the order is a no-op."""
        await self._conn.execute(
            pg_insert(invoices)
            .values(
                order_id=record.order_id,
                storage_key=record.storage_key,
                created_at=record.created_at,
            )
            .on_conflict_do_nothing(index_elements=[invoices.c.order_id])
        )
