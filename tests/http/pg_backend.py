"""The HTTP tests' backend on the Postgres adapters: a migrated database, emptied per test."""

from __future__ import annotations

from attrs import define
from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.job import Job
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.shop.models import Product, User
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_postgres import PostgresDatabase
from skincare_postgres.schema import jobs, metadata, products, users

TABLES = ", ".join(table.name for table in metadata.sorted_tables)


@define
class PostgresBackend:
    """PostgresDatabase over `engine`; seeding writes rows as an operator's import would."""

    engine: AsyncEngine

    @property
    def uow(self) -> UnitOfWorkFactory:
        return PostgresDatabase(self.engine, routes=SHOP_ROUTES)

    async def empty(self) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))

    async def add_user(self, email: str) -> User:
        async with self.engine.begin() as conn:
            row = await conn.execute(insert(users).values(email=email).returning(users.c.id))
            return User(row.scalar_one(), email)

    async def add_product(self, sku: str, name: str, price_rupiah: int, stock: int) -> Product:
        values = {"sku": sku, "name": name, "price_rupiah": price_rupiah, "stock": stock}
        async with self.engine.begin() as conn:
            row = await conn.execute(insert(products).values(values).returning(products.c.id))
            return Product(row.scalar_one(), sku, name, price_rupiah, stock)

    async def jobs(self) -> list[Job]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(jobs.c.body).order_by(jobs.c.created_at, jobs.c.id))
            return [decode_job(body) for body in rows.scalars()]
