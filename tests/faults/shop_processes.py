"""The shop's real processes for the fault tests: the seeded database, the worker and the API.

Shorter leases than production's (30 s) so that what a fault loses is delivered again within
the test's deadline; the e-mail queue's concurrency is what bounds the duplicate e-mails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from skincare_services.local import stop_process
from skincare_services.seed import SeededShop, seed_shop
from tests.e2e.e2e_client import ShopClient, api_process, base_env, worker_process
from tests.unmeasured import unmeasured

CUSTOMERS = 8
VISIBILITY = 5
"""Seconds of a job's lease: an ack, nack or receive a fault lost leaves its job to be
delivered again once this runs out (30 s by default, which stretches a test, not what it shows)."""
EMAIL_CONCURRENCY = 4
"""The e-mail queue's concurrency: at most this many sends are cut between send and record."""
WORKER_ENV = {
    "SKINCARE_WORKER_QUEUES": f"critical=4,default={EMAIL_CONCURRENCY},bulk=2",
    "SKINCARE_VISIBILITY_TIMEOUT_SECONDS": str(VISIBILITY),
}


def seeded(url: str) -> SeededShop:
    """CUSTOMERS customers and the catalogue, well stocked."""
    return anyio.run(lambda: seed_shop(url, users=CUSTOMERS, stock=10_000))


@contextmanager
def shop_processes(database_url: str, home: Path, **extra: str) -> Iterator[ShopClient]:
    """The worker and the API as real processes on `database_url`, with WORKER_ENV and `extra`;
    a client of the API, ready."""
    # Unmeasured (tests/unmeasured.py): the faults' load repeats paths measured elsewhere.
    env, port = base_env(database_url, home, **WORKER_ENV, **extra)
    env = unmeasured(env)
    worker = worker_process(env, home)
    try:
        with api_process(env, port, home) as client:
            assert worker.poll() is None, f"the worker exited: see {home / 'worker.log'}"
            yield client
    finally:
        stop_process(worker)
