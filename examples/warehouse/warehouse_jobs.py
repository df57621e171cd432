"""The warehouse team's job type, declared once: its arguments, its handler and its options.

This is the one file a team writes per job type; nothing in skincare's packages changes.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

from attrs import frozen

from skincare_core.jobs import JobDefinition, RetryPolicy


@frozen
class SyncWarehouseStock:
    """Which product's stock changed (an identity: the warehouse reads the stock itself)."""

    product_id: int


def sync_warehouse_stock(args: SyncWarehouseStock) -> None:
    """Tell the warehouse system that a product's stock changed (here: a JSON file per product
    in WAREHOUSE_SYNC_DIR). A plain `def`: the worker runs it in a thread, so blocking calls do
    not stall its event loop. Any exception retries it; running it twice is harmless."""
    target = Path(os.environ["WAREHOUSE_SYNC_DIR"]) / f"{args.product_id}.json"
    target.write_text(json.dumps({"product_id": args.product_id}))


SYNC_WAREHOUSE_STOCK = JobDefinition(
    "sync_warehouse_stock",
    SyncWarehouseStock,
    sync_warehouse_stock,
    queue="bulk",
    retry=RetryPolicy(attempts=8, base=timedelta(seconds=2), cap=timedelta(minutes=5)),
    timeout=timedelta(seconds=30),
)
