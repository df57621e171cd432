"""The warehouse team's HTTP service: FastAPI and SQLAlchemy on its own table, enqueueing
`sync_warehouse_stock` in the same transaction as the stock change it follows.

Run: `WAREHOUSE_DATABASE_URL=postgresql+psycopg://... uvicorn warehouse_app:app` (the
database is migrated with `skincare migrate`, which makes the jobs table).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, HTTPException, Response
from pydantic import BaseModel
from sqlalchemy import CheckConstraint
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from warehouse_jobs import SYNC_WAREHOUSE_STOCK, SyncWarehouseStock

from skincare_postgres import enqueue_in_transaction


class Base(DeclarativeBase):
    """The warehouse team's tables."""


class StockLevel(Base):
    """How many of a product the warehouse holds; never negative."""

    __tablename__ = "warehouse_stock_levels"
    __table_args__ = (CheckConstraint("quantity >= 0", name="quantity_not_negative"),)

    product_id: Mapped[int] = mapped_column(primary_key=True)
    quantity: Mapped[int]


class StockChange(BaseModel):
    """The body of PUT /stock/{product_id}."""

    quantity: int


def create_app(database_url: str) -> FastAPI:
    """The service on `database_url` (a postgresql+psycopg:// URL)."""
    engine = create_async_engine(database_url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        yield
        await engine.dispose()

    app = FastAPI(lifespan=lifespan)

    @app.put("/stock/{product_id}", status_code=204)
    async def set_stock(product_id: int, change: StockChange) -> Response:
        """Set a product's stock and tell the warehouse: both commit, or neither does."""
        job = SYNC_WAREHOUSE_STOCK.job(SyncWarehouseStock(product_id=product_id))
        try:
            async with sessions.begin() as session:
                await session.merge(StockLevel(product_id=product_id, quantity=change.quantity))
                await enqueue_in_transaction(session, job)
        except IntegrityError:
            # The commit failed on the CHECK constraint: the job rolled back with the stock.
            raise HTTPException(422, "stock cannot be negative") from None
        return Response(status_code=204)

    return app


app = create_app(os.environ.get("WAREHOUSE_DATABASE_URL", "postgresql+psycopg:///warehouse"))
