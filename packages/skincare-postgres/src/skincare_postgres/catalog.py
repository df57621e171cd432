"""Users, products and carts on one connection of a unit of work."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_core.models import CartLine, Product, User
from skincare_postgres.schema import cart_items, products, users


def product_of(row: Any) -> Product:
    """A Product from a row holding the products columns."""
    return Product(row.id, row.sku, row.name, row.price_rupiah, row.stock)


class PostgresUsers:
    """Customers."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def get(self, user_id: int) -> User | None:
        """The user, or None."""
        query = select(users.c.id, users.c.email, users.c.language).where(users.c.id == user_id)
        row = (await self._conn.execute(query)).first()
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
        row = (
            await self._conn.execute(select(products).where(products.c.id == product_id))
        ).first()
        return None if row is None else product_of(row)

    async def decrement_stock(self, product_id: int, quantity: int) -> None:
        """Take `quantity` out of stock."""
        await self._conn.execute(
            update(products)
            .where(products.c.id == product_id)
            .values(stock=products.c.stock - quantity)
        )


class PostgresCarts:
    """Users' carts, one row per (user, product)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def lines(self, user_id: int, *, lock_products: bool = False) -> list[CartLine]:
        """The cart by product id; `lock_products` locks the product rows FOR UPDATE in id order."""
        query = (
            select(products, cart_items.c.quantity)
            .join_from(cart_items, products, cart_items.c.product_id == products.c.id)
            .where(cart_items.c.user_id == user_id)
            .order_by(products.c.id)
        )
        if lock_products:
            # Locks are taken in id order, so concurrent checkouts cannot deadlock.
            query = query.with_for_update(of=products)
        rows = await self._conn.execute(query)
        return [CartLine(product_of(row), row.quantity) for row in rows]

    async def set_quantity(self, user_id: int, product_id: int, quantity: int) -> None:
        """Set a line's quantity; 0 removes it."""
        if quantity == 0:
            await self._conn.execute(
                delete(cart_items).where(
                    cart_items.c.user_id == user_id, cart_items.c.product_id == product_id
                )
            )
            return
        upsert = insert(cart_items).values(
            user_id=user_id, product_id=product_id, quantity=quantity
        )
        await self._conn.execute(
            upsert.on_conflict_do_update(
                index_elements=[cart_items.c.user_id, cart_items.c.product_id],
                set_={"quantity": upsert.excluded.quantity},
            )
        )

    async def clear(self, user_id: int) -> None:
        """Empty the cart."""
        await self._conn.execute(delete(cart_items).where(cart_items.c.user_id == user_id))
