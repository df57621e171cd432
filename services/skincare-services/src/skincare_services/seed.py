"""Demo data for local runs: a few skincare products and customers, written only when empty."""

from __future__ import annotations

import sqlalchemy as sa
from attrs import frozen
from sqlalchemy.ext.asyncio import AsyncConnection

from skincare_postgres import create_engine
from skincare_postgres.schema import products
from skincare_postgres.schema import users as users_t

PRODUCTS = [
    ("SRM-VITC-20", "Serum Vitamin C 20ml", 125_000),
    ("SPF-50-50", "Sunscreen SPF 50 50ml", 89_000),
    ("MST-CER-30", "Pelembap Ceramide 30g", 150_000),
    ("TNR-NIA-100", "Toner Niacinamide 100ml", 99_000),
]


@frozen
class SeededShop:
    """Who and what the seed put in the database."""

    user_ids: tuple[int, ...]
    emails: tuple[str, ...]
    product_ids: tuple[int, ...]


async def seed_shop(url: str, *, users: int = 2, stock: int = 100) -> SeededShop:
    """Insert `users` customers and the demo catalogue unless the tables already hold rows."""
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            if not (await conn.execute(sa.select(sa.func.count()).select_from(products))).scalar():
                await _insert(conn, users, stock)
            user_rows = (await conn.execute(sa.select(users_t.c.id, users_t.c.email))).all()
            product_rows = (await conn.execute(sa.select(products.c.id))).all()
    finally:
        await engine.dispose()
    return SeededShop(
        tuple(r.id for r in sorted(user_rows)),
        tuple(r.email for r in sorted(user_rows)),
        tuple(sorted(r.id for r in product_rows)),
    )


async def _insert(conn: AsyncConnection, count: int, stock: int) -> None:
    people = [
        {"email": f"pelanggan{n}@skincare.example", "language": "id" if n % 2 else "en"}
        for n in range(1, count + 1)
    ]
    await conn.execute(sa.insert(users_t), people)
    catalogue = [
        {"sku": sku, "name": name, "price_rupiah": price, "stock": stock}
        for sku, name, price in PRODUCTS
    ]
    await conn.execute(sa.insert(products), catalogue)


async def seed_demo_data(url: str) -> list[tuple[int, str]]:
    """The two demo customers (seeded if the database is empty) as (id, e-mail)."""
    shop = await seed_shop(url)
    return list(zip(shop.user_ids, shop.emails, strict=True))
