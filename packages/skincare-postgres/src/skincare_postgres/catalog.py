"""Users, products and carts on one connection of a unit of work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, delete, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_core.models import CartLine, Product, User
from skincare_postgres.schema import cart_items, products, users

# Built once: building a statement and its cache key costs ~0.2 ms a call, the cart's hot path.
_USER = select(users.c.id, users.c.email, users.c.language).where(
    users.c.id == bindparam("user_id")
)
_PRODUCT = select(products).where(products.c.id == bindparam("product_id"))
_LINES = (
    select(products, cart_items.c.quantity)
    .join_from(cart_items, products, cart_items.c.product_id == products.c.id)
    .where(cart_items.c.user_id == bindparam("user_id"))
    .order_by(products.c.id)
)
# Locks are taken in id order, so concurrent checkouts cannot deadlock.
_LINES_LOCKED = _LINES.with_for_update(of=products)
_upsert = insert(cart_items).values(
    user_id=bindparam("user_id"), product_id=bindparam("product_id"), quantity=bindparam("quantity")
)
_SET_QUANTITY = _upsert.on_conflict_do_update(
    index_elements=[cart_items.c.user_id, cart_items.c.product_id],
    set_={"quantity": _upsert.excluded.quantity},
)
_REMOVE_LINE = delete(cart_items).where(
    cart_items.c.user_id == bindparam("user_id"), cart_items.c.product_id == bindparam("product_id")
)
# Stock and cart in one round trip; CHECK (stock >= 0) backs up the caller's check.
_CHECK_OUT = text(
    "WITH taken AS (UPDATE products SET stock = products.stock - line.quantity"
    " FROM unnest(CAST(:product_ids AS bigint[]), CAST(:quantities AS integer[]))"
    " AS line(product_id, quantity) WHERE products.id = line.product_id RETURNING 1)"
    " DELETE FROM cart_items WHERE user_id = :user_id"
)


def product_of(row: Any) -> Product:
    """A Product from a row holding the products columns."""
    return Product(row.id, row.sku, row.name, row.price_rupiah, row.stock)


class PostgresUsers:
    """Customers."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def get(self, user_id: int) -> User | None:
        """The user, or None."""
        row = (await self._conn.execute(_USER, {"user_id": user_id})).first()
        return None if row is None else User(row.id, row.email, row.language)


class PostgresProducts:
    """The catalogue and its stock (CHECK stock >= 0 backs up the caller's check)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def list(self) -> list[Product]:
        """Every product, by id."""
        rows = await self._conn.execute(select(products).order_by(products.c.id))
        return [product_of(row) for row in rows]

    async def get(self, product_id: int) -> Product | None:
        """One product, or None."""
        row = (await self._conn.execute(_PRODUCT, {"product_id": product_id})).first()
        return None if row is None else product_of(row)


class PostgresCarts:
    """Users' carts, one row per (user, product)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def lines(self, user_id: int, *, lock_products: bool = False) -> list[CartLine]:
        """The cart by product id; `lock_products` locks the product rows FOR UPDATE in id order."""
        query = _LINES_LOCKED if lock_products else _LINES
        rows = await self._conn.execute(query, {"user_id": user_id})
        return [CartLine(product_of(row), row.quantity) for row in rows]

    async def set_quantity(self, user_id: int, product_id: int, quantity: int) -> None:
        """Set a line's quantity; 0 removes it."""
        params = {"user_id": user_id, "product_id": product_id, "quantity": quantity}
        await self._conn.execute(_REMOVE_LINE if quantity == 0 else _SET_QUANTITY, params)

    async def check_out(self, user_id: int, lines: Sequence[CartLine]) -> None:
        """Take the lines' quantities out of stock and empty the cart, in one statement."""
        params = {
            "user_id": user_id,
            "product_ids": [line.product.id for line in lines],
            "quantities": [line.quantity for line in lines],
        }
        await self._conn.execute(_CHECK_OUT, params)
