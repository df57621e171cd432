"""The warehouse team's worker: skincare's worker serving the team's definitions, with their
queues, retry policies and timeouts, until SIGTERM.

Run: `python -m warehouse_worker` with the skincare-worker environment (SKINCARE_DATABASE_URL,
...), WAREHOUSE_DATABASE_URL and WAREHOUSE_SYNC_DIR.
"""

from __future__ import annotations

import functools

import anyio
from warehouse_jobs import SYNC_WAREHOUSE_STOCK

from skincare_core.jobs import Definitions
from skincare_services.startup import settings_or_exit
from skincare_services.worker import run_worker

DEFINITIONS = Definitions(SYNC_WAREHOUSE_STOCK)


def main() -> None:
    """Serve the warehouse team's job types until SIGTERM."""
    settings = settings_or_exit("worker")
    anyio.run(functools.partial(run_worker, settings, definitions=DEFINITIONS))


if __name__ == "__main__":
    main()
