"""The shop's repositories: what a unit of work reads and writes, one Protocol per aggregate."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from skincare_core.shop.models import (
    CartLine,
    DailySales,
    InvoiceRecord,
    NewOrder,
    NotificationType,
    Order,
    OrderItem,
    Payment,
    PaymentEvent,
    Product,
    SendClaim,
    User,
)
from skincare_core.shop.sales import SalesDay


class UserRepository(Protocol):
    """Customers."""

    async def get(self, user_id: int) -> User | None:
        """The user, or None."""


class ProductRepository(Protocol):
    """The catalogue and its stock."""

    async def list(self) -> list[Product]:
        """Every product, by id."""

    async def get(self, product_id: int) -> Product | None:
        """One product, or None."""

    async def put_back(self, items: Sequence[OrderItem]) -> None:
        """Return the items' quantities to stock (an expired order's)."""


class CartRepository(Protocol):
    """Users' carts."""

    async def lines(self, user_id: int, *, lock_products: bool = False) -> list[CartLine]:
        """The cart by product id; with `lock_products` the product rows are locked in id order."""

    async def set_quantity(self, user_id: int, product_id: int, quantity: int) -> None:
        """Set a line's quantity; 0 removes it."""

    async def check_out(self, user_id: int, lines: Sequence[CartLine]) -> None:
        """Take `lines`' quantities out of stock and empty the cart (stock checked under lock)."""


class OrderRepository(Protocol):
    """Placed orders."""

    async def get(self, order_id: int, *, for_update: bool = False) -> Order | None:
        """The order with items, or None; `for_update` locks it."""

    async def find_by_idempotency_key(self, user_id: int, key: str) -> Order | None:
        """The order this user placed with this key, or None."""

    async def add(self, order: NewOrder) -> Order:
        """Write the order and its items; DuplicateIdempotencyKey if the key is taken."""

    async def mark_paid(self, order_id: int) -> bool:
        """Move `pending -> paid` (payment_status paid); False if it was not pending."""

    async def mark_expired(self, order_id: int) -> bool:
        """Move `pending -> expired`; False if it was not pending."""


class PaymentRepository(Protocol):
    """Payment events from the gateway."""

    async def add_event(self, event: PaymentEvent) -> bool:
        """Store the event unless its event_id exists; True when it was new."""

    async def get(self, event_id: str, *, for_update: bool = False) -> Payment | None:
        """The payment, or None; `for_update` locks it."""

    async def mark_paid(self, event_id: str, paid_at: datetime) -> None:
        """Record the event as applied."""


class NotificationRepository(Protocol):
    """Which e-mails each order already got (UNIQUE order_id + type), and who is sending one."""

    async def is_notified(self, order_id: int, kind: NotificationType) -> bool:
        """Whether this notification was recorded as sent."""

    async def claim_send(
        self, order_id: int, kind: NotificationType, claim: SendClaim, now: datetime
    ) -> SendClaim | None:
        """Take the send for `claim` unless a claim live at `now` holds it (atomically).

        Returns the claim holding the send afterwards (`claim` itself when taken), or None
        when the notification is already recorded as sent.
        """

    async def renew_send(
        self, order_id: int, kind: NotificationType, token: str, until: datetime
    ) -> bool:
        """Move the unsent claim `token` holds to `until`; False if `token` no longer holds it."""

    async def release_send(self, order_id: int, kind: NotificationType, token: str) -> None:
        """Drop the claim `token` holds (its send failed), so the next delivery may send."""

    async def mark_notified(self, order_id: int, kind: NotificationType, sent_at: datetime) -> None:
        """Record it sent, claimed or not; AlreadyNotified if it already was (tx stays usable)."""


class InvoiceRepository(Protocol):
    """Invoices stored per order."""

    async def get(self, order_id: int) -> InvoiceRecord | None:
        """The invoice record, or None."""

    async def add(self, record: InvoiceRecord) -> None:
        """Record the invoice; a second record for the order is a no-op."""


class SalesRepository(Protocol):
    """What the shop sold: paid orders by the day their payment arrived (`shop.sales`)."""

    async def of_day(self, day: SalesDay, *, top: int) -> DailySales:
        """The orders paid in `[day.start, day.end)`, their revenue, and the `top` products
        by quantity sold (ties by product id)."""


class ReportRepository(Protocol):
    """Reports e-mailed to the shop (one per key, like `report:2026-12-03`) and the claims
    to send them: the same lease rules as `NotificationRepository`, keyed by text."""

    async def claim_send(self, key: str, claim: SendClaim, now: datetime) -> SendClaim | None:
        """Take the send for `claim` unless a claim live at `now` holds it (atomically); the
        claim holding it afterwards, or None when the report is already recorded as sent."""

    async def renew_send(self, key: str, token: str, until: datetime) -> bool:
        """Move the unsent claim `token` holds to `until`; False if `token` no longer holds it."""

    async def release_send(self, key: str, token: str) -> None:
        """Drop the claim `token` holds (its send failed), so the next delivery may send."""

    async def mark_sent(self, key: str, sent_at: datetime) -> bool:
        """Record it sent, ending any claim; False if it already was."""
