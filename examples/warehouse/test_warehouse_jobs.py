"""The warehouse team's tests of its job, run inline by skincare's test drain."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from warehouse_jobs import SYNC_WAREHOUSE_STOCK, SyncWarehouseStock

from skincare_core.testing.drain import JobDrain

pytestmark = pytest.mark.anyio


async def test_a_stock_change_is_synced(
    job_drain: JobDrain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAREHOUSE_SYNC_DIR", str(tmp_path))
    await job_drain.enqueue(SYNC_WAREHOUSE_STOCK.job(SyncWarehouseStock(product_id=42)))
    [run] = await job_drain.drain()
    assert (run.queue, run.outcome) == ("bulk", "done")
    assert json.loads((tmp_path / "42.json").read_text()) == {"product_id": 42}


async def test_a_failed_sync_is_retried_after_its_backoff(
    job_drain: JobDrain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAREHOUSE_SYNC_DIR", str(tmp_path / "not-mounted-yet"))
    await job_drain.enqueue(SYNC_WAREHOUSE_STOCK.job(SyncWarehouseStock(product_id=42)))
    [failed] = await job_drain.drain()
    assert failed.outcome == "retried"
    assert failed.error is not None
    assert failed.error.startswith("FileNotFoundError")
    (tmp_path / "not-mounted-yet").mkdir()
    job_drain.advance(timedelta(seconds=2))  # the policy's longest first backoff
    [retried] = await job_drain.drain()
    assert (retried.attempt, retried.outcome) == (2, "done")
