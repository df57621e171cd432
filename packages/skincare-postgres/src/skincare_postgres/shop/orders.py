"""Orders and their items on one connection of a unit of work."""

from __future__ import annotations

from typing import LiteralString

import psycopg
from psycopg.rows import DictRow, class_row, dict_row

from skincare_core.shop.errors import DuplicateIdempotencyKey
from skincare_core.shop.models import NewOrder, Order, OrderItem, OrderStatus, PaymentStatus
from skincare_postgres.constraints import violated_constraint
from skincare_postgres.driver import Driver
from skincare_postgres.execution import Params

_IDEMPOTENCY_KEY = "uq_orders_user_id_idempotency_key"
_COLUMNS = "id, order_number, user_id, status, payment_status, total_rupiah, created_at"
# The order and its items in one round trip: checkout is the API's hottest transaction.
_INSERT_ORDER_WITH_ITEMS = (
    "WITH placed AS ("
    " INSERT INTO orders (order_number, user_id, status, payment_status, total_rupiah,"
    " idempotency_key, created_at, updated_at)"
    " VALUES (%(order_number)s, %(user_id)s, %(status)s, %(payment_status)s, %(total_rupiah)s,"
    " %(idempotency_key)s, %(created_at)s, %(created_at)s)"
    f" RETURNING {_COLUMNS}),"
    " items AS ("
    " INSERT INTO order_items (order_id, product_id, name, quantity, unit_price_rupiah)"
    " SELECT placed.id, item.product_id, item.name, item.quantity, item.price"
    " FROM placed, unnest(CAST(%(product_ids)s AS bigint[]),"
    " CAST(%(names)s AS text[]), CAST(%(quantities)s AS integer[]), CAST(%(prices)s AS bigint[]))"
    " WITH ORDINALITY AS item(product_id, name, quantity, price, n) ORDER BY item.n)"
    " SELECT * FROM placed"
)
_BY_ID = f"SELECT {_COLUMNS} FROM orders WHERE id = %(order_id)s"
_BY_ID_FOR_UPDATE = f"{_BY_ID} FOR UPDATE"
_BY_IDEMPOTENCY_KEY = (
    f"SELECT {_COLUMNS} FROM orders WHERE user_id = %(user_id)s AND idempotency_key = %(key)s"
)
_ITEMS = (
    "SELECT product_id, name, quantity, unit_price_rupiah FROM order_items"
    " WHERE order_id = %(order_id)s ORDER BY id"
)
_MARK_PAID = (
    "UPDATE orders SET status = %(paid)s, payment_status = %(payment_paid)s, updated_at = now()"
    " WHERE id = %(order_id)s AND status = %(pending)s RETURNING 1"
)
_MARK_EXPIRED = (
    "UPDATE orders SET status = %(expired)s, updated_at = now()"
    " WHERE id = %(order_id)s AND status = %(pending)s RETURNING 1"
)
_ITEM_ROW = class_row(OrderItem)


class PostgresOrders:
    """Placed orders, unique per (user, idempotency key)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def get(self, order_id: int, *, for_update: bool = False) -> Order | None:
        """The order with items, or None; `for_update` locks the order row."""
        return await self._one(_BY_ID_FOR_UPDATE if for_update else _BY_ID, {"order_id": order_id})

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
            [row] = await self._driver.rows(_INSERT_ORDER_WITH_ITEMS, params, dict_row)
        except psycopg.IntegrityError as error:
            if violated_constraint(error) == _IDEMPOTENCY_KEY:
                raise DuplicateIdempotencyKey(order.idempotency_key) from error
            raise
        return _order_of(row, order.items)

    async def mark_paid(self, order_id: int) -> bool:
        """Move `pending -> paid` (payment_status paid); False if it was not pending."""
        params = {
            "order_id": order_id,
            "paid": OrderStatus.PAID.value,
            "payment_paid": PaymentStatus.PAID.value,
            "pending": OrderStatus.PENDING.value,
        }
        return await self._driver.returned_row(_MARK_PAID, params)

    async def mark_expired(self, order_id: int) -> bool:
        """Move `pending -> expired`; False if it was not pending."""
        params = {
            "order_id": order_id,
            "expired": OrderStatus.EXPIRED.value,
            "pending": OrderStatus.PENDING.value,
        }
        return await self._driver.returned_row(_MARK_EXPIRED, params)

    async def _one(self, query: LiteralString, params: Params) -> Order | None:
        found = await self._driver.rows(query, params, dict_row)
        if not found:
            return None
        items = await self._driver.rows(_ITEMS, {"order_id": found[0]["id"]}, _ITEM_ROW)
        return _order_of(found[0], tuple(items))


def _order_of(row: DictRow, items: tuple[OrderItem, ...]) -> Order:
    return Order(
        id=row["id"],
        order_number=row["order_number"],
        user_id=row["user_id"],
        status=OrderStatus(row["status"]),
        payment_status=PaymentStatus(row["payment_status"]),
        total_rupiah=row["total_rupiah"],
        items=items,
        created_at=row["created_at"],
    )
