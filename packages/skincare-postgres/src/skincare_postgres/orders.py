"""Orders and their items on one connection of a unit of work."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_core.errors import DuplicateIdempotencyKey
from skincare_core.models import NewOrder, Order, OrderItem, OrderStatus, PaymentStatus
from skincare_postgres.constraints import violated_constraint
from skincare_postgres.schema import order_items, orders

_IDEMPOTENCY_KEY = "uq_orders_user_id_idempotency_key"
_ORDER_COLUMNS = (
    orders.c.id,
    orders.c.order_number,
    orders.c.user_id,
    orders.c.status,
    orders.c.payment_status,
    orders.c.total_rupiah,
    orders.c.created_at,
)


# The order and its items in one round trip: checkout is the API's hottest transaction.
_INSERT_ORDER_WITH_ITEMS = text(
    "WITH placed AS ("
    " INSERT INTO orders (order_number, user_id, status, payment_status, total_rupiah,"
    " idempotency_key, created_at, updated_at)"
    " VALUES (:order_number, :user_id, :status, :payment_status, :total_rupiah,"
    " :idempotency_key, :created_at, :created_at)"
    " RETURNING id, order_number, user_id, status, payment_status, total_rupiah, created_at),"
    " items AS ("
    " INSERT INTO order_items (order_id, product_id, name, quantity, unit_price_rupiah)"
    " SELECT placed.id, item.product_id, item.name, item.quantity, item.price"
    " FROM placed, unnest(CAST(:product_ids AS bigint[]),"
    " CAST(:names AS text[]), CAST(:quantities AS integer[]), CAST(:prices AS bigint[]))"
    " WITH ORDINALITY AS item(product_id, name, quantity, price, n) ORDER BY item.n)"
    " SELECT * FROM placed"
)


# Built once (see catalog.py): a repeated checkout and the duplicate-key path look orders up.
_BY_IDEMPOTENCY_KEY = select(*_ORDER_COLUMNS).where(
    orders.c.user_id == bindparam("user_id"), orders.c.idempotency_key == bindparam("key")
)
_ITEMS = (
    select(
        order_items.c.product_id,
        order_items.c.name,
        order_items.c.quantity,
        order_items.c.unit_price_rupiah,
    )
    .where(order_items.c.order_id == bindparam("order_id"))
    .order_by(order_items.c.id)
)


class PostgresOrders:
    """Placed orders, unique per (user, idempotency key)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def get(self, order_id: int, *, for_update: bool = False) -> Order | None:
        """The order with items, or None; `for_update` locks the order row."""
        query = select(*_ORDER_COLUMNS).where(orders.c.id == order_id)
        if for_update:
            query = query.with_for_update()
        return await self._one(query)

    async def find_by_idempotency_key(self, user_id: int, key: str) -> Order | None:
        """The order this user placed with this key, or None."""
        return await self._one(_BY_IDEMPOTENCY_KEY, {"user_id": user_id, "key": key})

    async def add(self, order: NewOrder) -> Order:
        """Write the order and its items; DuplicateIdempotencyKey if the key is taken."""
        params = {
            "order_number": order.order_number,
            "user_id": order.user_id,
            "status": OrderStatus.PENDING.value,
            "payment_status": PaymentStatus.UNPAID.value,
            "total_rupiah": order.total_rupiah,
            "idempotency_key": order.idempotency_key,
            "created_at": order.created_at,
            "product_ids": [item.product_id for item in order.items],
            "names": [item.name for item in order.items],
            "quantities": [item.quantity for item in order.items],
            "prices": [item.unit_price_rupiah for item in order.items],
        }
        try:
            row = (await self._conn.execute(_INSERT_ORDER_WITH_ITEMS, params)).one()
        except IntegrityError as error:
            if violated_constraint(error) == _IDEMPOTENCY_KEY:
                raise DuplicateIdempotencyKey(order.idempotency_key) from error
            raise
        return _order_of(row, order.items)

    async def mark_paid(self, order_id: int) -> bool:
        """Move `pending -> paid` (payment_status paid); False if it was not pending."""
        result = await self._conn.execute(
            update(orders)
            .where(orders.c.id == order_id, orders.c.status == OrderStatus.PENDING.value)
            .values(
                status=OrderStatus.PAID.value,
                payment_status=PaymentStatus.PAID.value,
                updated_at=func.now(),
            )
        )
        return result.rowcount == 1

    async def _one(self, query: Any, params: dict[str, Any] | None = None) -> Order | None:
        row = (await self._conn.execute(query, params)).first()
        if row is None:
            return None
        items = await self._conn.execute(_ITEMS, {"order_id": row.id})
        return _order_of(row, tuple(OrderItem(*item) for item in items))


def _order_of(row: Any, items: tuple[OrderItem, ...]) -> Order:
    return Order(
        row.id,
        row.order_number,
        row.user_id,
        OrderStatus(row.status),
        PaymentStatus(row.payment_status),
        row.total_rupiah,
        items,
        row.created_at,
    )
