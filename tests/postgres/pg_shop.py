"""Seeding and inspection helpers for the Postgres tests."""

from __future__ import annotations

import uuid

from attrs import define
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.shop.models import Product, User
from skincare_postgres.schema import cart_items, products, users


@define
class Shop:
    """Seeds rows straight into the tables, as an operator's import would."""

    engine: AsyncEngine

    async def user(self, email: str = "", language: str = "id") -> User:
        """A new user."""
        email = email or f"{uuid.uuid4().hex[:8]}@example.test"
        async with self.engine.begin() as conn:
            row = await conn.execute(
                insert(users).values(email=email, language=language).returning(users.c.id)
            )
            return User(row.scalar_one(), email, language)

    async def product(self, *, price: int = 150_000, stock: int = 10) -> Product:
        """A new product."""
        sku = f"SKU-{uuid.uuid4().hex[:8]}"
        name = f"Serum {sku}"
        values = {"sku": sku, "name": name, "price_rupiah": price, "stock": stock}
        async with self.engine.begin() as conn:
            row = await conn.execute(insert(products).values(values).returning(products.c.id))
            return Product(row.scalar_one(), sku, name, price, stock)

    async def cart(self, user: User, product: Product, quantity: int) -> None:
        """Put `quantity` of `product` in the user's cart."""
        async with self.engine.begin() as conn:
            await conn.execute(
                insert(cart_items).values(user_id=user.id, product_id=product.id, quantity=quantity)
            )

    async def scalar(self, sql: str, **params: object) -> object:
        """One value of a query."""
        async with self.engine.connect() as conn:
            return (await conn.execute(text(sql), params)).scalar_one()
