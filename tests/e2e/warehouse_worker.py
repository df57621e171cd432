"""Another team's worker: the shop's worker plus `sync_warehouse_stock`, registered from outside
the packages (nothing in core or services names it).

Run as `python -m warehouse_worker` with the `skincare-worker` environment and
`WAREHOUSE_SYNC_DIR`, where each synced job leaves `<job id>.json`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import anyio

from skincare_core.jobs import Job, PermanentJobError
from skincare_services.startup import settings_or_exit
from skincare_services.worker import run_worker

SYNC_WAREHOUSE_STOCK = "sync_warehouse_stock"


class SyncWarehouseStock:
    """Tells the warehouse about a product (here: a file per job, which the test reads)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    async def __call__(self, job: Job) -> None:
        if "product_id" not in job.payload:
            raise PermanentJobError("sync_warehouse_stock needs a product_id")
        # Writing the same file again on a redelivery is harmless: the handler is idempotent.
        record = json.dumps({"product_id": job.payload["product_id"]})
        await anyio.Path(self._directory / f"{job.id}.json").write_text(record)


def main() -> None:
    """The team's worker entry point: the shop's job types and theirs, until SIGTERM."""
    settings = settings_or_exit("worker")
    directory = Path(os.environ["WAREHOUSE_SYNC_DIR"])
    handlers = {SYNC_WAREHOUSE_STOCK: SyncWarehouseStock(directory)}
    anyio.run(functools.partial(run_worker, settings, handlers=handlers))


if __name__ == "__main__":
    main()
