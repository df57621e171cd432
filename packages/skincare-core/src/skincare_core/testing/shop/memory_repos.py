"""Repositories of the in-memory unit of work, enforcing the database's uniqueness rules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from attrs import evolve

from skincare_core.shop.errors import DuplicateIdempotencyKey
from skincare_core.shop.models import (
    CartLine,
    InvoiceRecord,
    NewOrder,
    Order,
    OrderItem,
    OrderStatus,
    Payment,
    PaymentEvent,
    PaymentStatus,
    Product,
    User,
)
from skincare_core.testing.shop.memory_state import Transaction


class _Repo:
    def __init__(self, uow: Transaction) -> None:
        self._uow = uow
        self._s = uow.state


class Users(_Repo):
    """Users by id."""

    async def get(self, user_id: int) -> User | None:
        """The user, or None."""
        return self._s.users.get(user_id)


class Products(_Repo):
    """The catalogue."""

    async def list(self) -> list[Product]:
        """Every product by id."""
        return [self._s.products[k] for k in sorted(self._s.products)]

    async def get(self, product_id: int) -> Product | None:
        """One product, or None."""
        return self._s.products.get(product_id)

    async def put_back(self, items: Sequence[OrderItem]) -> None:
        """Return the items' quantities to stock."""
        for item in items:
            product = self._s.products[item.product_id]
            self._s.products[product.id] = evolve(product, stock=product.stock + item.quantity)


class Carts(_Repo):
    """Carts keyed by (user, product)."""

    async def lines(self, user_id: int, *, lock_products: bool = False) -> list[CartLine]:
        """The cart by product id (the whole unit of work is already serialised)."""
        return [
            CartLine(self._s.products[pid], qty)
            for (uid, pid), qty in sorted(self._s.carts.items())
            if uid == user_id
        ]

    async def set_quantity(self, user_id: int, product_id: int, quantity: int) -> None:
        """Set or (0) remove a line."""
        if quantity == 0:
            self._s.carts.pop((user_id, product_id), None)
        else:
            self._s.carts[(user_id, product_id)] = quantity

    async def check_out(self, user_id: int, lines: Sequence[CartLine]) -> None:
        """Stock never goes below zero, as the CHECK constraint says; then the cart is empty."""
        for line in lines:
            product = self._s.products[line.product.id]
            if product.stock < line.quantity:
                raise ValueError("stock would go negative")
            self._s.products[product.id] = evolve(product, stock=product.stock - line.quantity)
        for key in [k for k in self._s.carts if k[0] == user_id]:
            del self._s.carts[key]


class Orders(_Repo):
    """Orders, unique per (user, idempotency key)."""

    async def get(self, order_id: int, *, for_update: bool = False) -> Order | None:
        """The order, or None."""
        return self._s.orders.get(order_id)

    async def find_by_idempotency_key(self, user_id: int, key: str) -> Order | None:
        """The order placed with this key, or None."""
        order_id = self._s.order_keys.get((user_id, key))
        return None if order_id is None else self._s.orders[order_id]

    async def add(self, order: NewOrder) -> Order:
        """Write the order; DuplicateIdempotencyKey if the key is taken."""
        self._uow.fault("orders.add")
        if (order.user_id, order.idempotency_key) in self._s.order_keys:
            raise DuplicateIdempotencyKey(order.idempotency_key)
        placed = Order(
            self._uow.next_id(),
            order.order_number,
            order.user_id,
            OrderStatus.PENDING,
            PaymentStatus.UNPAID,
            order.total_rupiah,
            order.items,
            order.created_at,
        )
        self._s.orders[placed.id] = placed
        self._s.order_keys[(order.user_id, order.idempotency_key)] = placed.id
        return placed

    async def mark_paid(self, order_id: int) -> bool:
        """pending -> paid only."""
        order = self._s.orders[order_id]
        if order.status is not OrderStatus.PENDING:
            return False
        paid = evolve(order, status=OrderStatus.PAID, payment_status=PaymentStatus.PAID)
        self._s.orders[order_id] = paid
        return True

    async def mark_expired(self, order_id: int) -> bool:
        """pending -> expired only."""
        order = self._s.orders[order_id]
        if order.status is not OrderStatus.PENDING:
            return False
        self._s.orders[order_id] = evolve(order, status=OrderStatus.EXPIRED)
        return True


class Payments(_Repo):
    """Payment events, unique by event id."""

    async def add_event(self, event: PaymentEvent) -> bool:
        """Store unless the event id exists."""
        if event.event_id in self._s.payments:
            return False
        self._s.payments[event.event_id] = Payment(
            event.event_id, event.order_id, PaymentStatus.PENDING, event.amount_rupiah, None
        )
        return True

    async def get(self, event_id: str, *, for_update: bool = False) -> Payment | None:
        """The payment, or None."""
        return self._s.payments.get(event_id)

    async def mark_paid(self, event_id: str, paid_at: datetime) -> None:
        """Record the event as applied."""
        payment = self._s.payments[event_id]
        self._s.payments[event_id] = evolve(payment, status=PaymentStatus.PAID, paid_at=paid_at)


class Invoices(_Repo):
    """One invoice record per order."""

    async def get(self, order_id: int) -> InvoiceRecord | None:
        """The record, or None."""
        return self._s.invoices.get(order_id)

    async def add(self, record: InvoiceRecord) -> None:
        """Record unless present."""
        self._s.invoices.setdefault(record.order_id, record)
