"""The warehouse team's job type, declared once: its arguments, its handler and its options.

This is the one file a team writes per job type; nothing in skincare's packages changes.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import psycopg
from attrs import frozen

from skincare_core.jobs import JobDefinition, PermanentJobError, RetryPolicy


@frozen
class SyncWarehouseStock:
    """Which product's stock the warehouse must be told about (an identity, not a snapshot)."""

    product_id: int


def sync_warehouse_stock(args: SyncWarehouseStock) -> None:
    """Send the product's current stock to the warehouse system (here: a JSON file per product
    in WAREHOUSE_SYNC_DIR). A plain `def`: the worker runs it in a thread, so the blocking
    psycopg connection does not stall its event loop. Running it twice is harmless."""
    # The service's SQLAlchemy URL (postgresql+psycopg://...), as libpq reads it.
    url = os.environ["WAREHOUSE_DATABASE_URL"].replace("+psycopg", "", 1)
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT quantity FROM warehouse_stock_levels WHERE product_id = %s",
            (args.product_id,),
        ).fetchone()
    if row is None:
        raise PermanentJobError(f"no stock level for product {args.product_id}")
    record = {"product_id": args.product_id, "quantity": row[0]}
    target = Path(os.environ["WAREHOUSE_SYNC_DIR"]) / f"{args.product_id}.json"
    target.write_text(json.dumps(record))


SYNC_WAREHOUSE_STOCK = JobDefinition(
    "sync_warehouse_stock",
    SyncWarehouseStock,
    sync_warehouse_stock,
    queue="bulk",
    retry=RetryPolicy(attempts=8, base=timedelta(seconds=2), cap=timedelta(minutes=5)),
    timeout=timedelta(seconds=30),
)
