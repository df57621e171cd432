"""A team's own job type, registered from outside the packages, runs in a real worker process:
enqueued through the outbox in a business transaction, served on the Postgres queue."""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import anyio
import psycopg
import pytest

from skincare_core.jobs import Job, new_job
from skincare_postgres import PostgresDatabase, create_engine, postgres_backend
from skincare_postgres.engine import libpq_conninfo
from skincare_services.local import start_process, stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import base_env
from tests.e2e.warehouse_worker import SYNC_WAREHOUSE_STOCK

pytestmark = pytest.mark.slow
GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "job-types.md"


async def _add_to_cart_and_sync(database_url: str, shop: SeededShop) -> Job:
    """One transaction: a cart line (the business write) and the job it makes necessary."""
    user_id, product_id = shop.user_ids[0], shop.product_ids[0]
    job = new_job(SYNC_WAREHOUSE_STOCK, product_id=str(product_id))
    engine = create_engine(database_url)
    try:
        async with PostgresDatabase(engine)() as uow:
            await uow.carts.set_quantity(user_id, product_id, 2)
            await uow.outbox.add(job)
    finally:
        await engine.dispose()
    return job


async def _cart_and_dead_count(database_url: str, shop: SeededShop) -> tuple[int, int]:
    engine = create_engine(database_url)
    try:
        async with PostgresDatabase(engine)() as uow:
            [line] = await uow.carts.lines(shop.user_ids[0])
        async with postgres_backend(engine) as backend:
            return line.quantity, await backend.dead_letters.count()
    finally:
        await engine.dispose()


def _start_worker(
    module: str, path: Path, env: dict[str, str], home: Path
) -> subprocess.Popen[bytes]:
    """`python -m module` from `path`, as a team runs its own worker module."""
    pythonpath = os.pathsep.join(p for p in (str(path), os.environ.get("PYTHONPATH", "")) if p)
    with (home / f"{module}.log").open("ab") as log:
        return start_process(module, {**env, "PYTHONPATH": pythonpath}, log)


def _jobs_left(database_url: str) -> int:
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        row = conn.execute("SELECT count(*) FROM jobs").fetchone()
    assert row is not None
    return int(row[0])


def test_sync_warehouse_stock_runs_in_the_teams_worker_process(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    synced = home / "warehouse"
    synced.mkdir()
    env, _ = base_env(database_url, home, WAREHOUSE_SYNC_DIR=str(synced))
    worker = _start_worker("warehouse_worker", Path(__file__).parent, env, home)
    try:
        job = anyio.run(_add_to_cart_and_sync, database_url, shop)
        record = synced / f"{job.id}.json"
        assert wait_for(record.exists, 30), (home / "warehouse_worker.log").read_text()
    finally:
        assert stop_process(worker) == 0
    assert json.loads(record.read_text()) == {"product_id": str(shop.product_ids[0])}
    assert anyio.run(_cart_and_dead_count, database_url, shop) == (2, 0)


def test_the_guide_example_worker_runs_the_job(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    [example] = [b for b in map(textwrap.dedent, blocks) if b.startswith("# warehouse_worker.py")]
    (home / "readme_worker.py").write_text(example)
    env, _ = base_env(database_url, home)
    worker = _start_worker("readme_worker", home, env, home)
    try:
        anyio.run(_add_to_cart_and_sync, database_url, shop)
        assert wait_for(lambda: _jobs_left(database_url) == 0, 30)
    finally:
        assert stop_process(worker) == 0
    log = (home / "readme_worker.log").read_text()
    assert f"syncing product {shop.product_ids[0]}" in log, log
    assert anyio.run(_cart_and_dead_count, database_url, shop) == (2, 0)
