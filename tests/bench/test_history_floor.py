"""The drain bench's history floor: ours keeping history rows in a job_history with no index."""

from __future__ import annotations

import anyio
import psycopg
import pytest

from bench.compare.harness import wait_empty
from bench.compare.run_ours import open_system
from bench.compare.server import BenchServer
from bench.compare.systems import Received

pytestmark = pytest.mark.anyio


def _history(url: str) -> tuple[list[str], int]:
    """job_history's index names and its row count."""
    with psycopg.connect(url) as conn:
        names = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'job_history'")
        indexes = [str(row[0]) for row in names.fetchall()]
        rows = conn.execute("SELECT count(*) FROM job_history").fetchone()
    return indexes, int(rows[0]) if rows else -1


@pytest.mark.parametrize("indexed", [True, False])
async def test_a_drained_job_leaves_its_history_row_indexed_only_when_asked(
    postgres_url: str, indexed: bool
) -> None:
    done: list[Received] = []

    async def handler(payload: Received) -> None:
        done.append(payload)

    server = BenchServer(postgres_url, None)
    async with (
        server.fresh_database("floor") as url,
        open_system(url, {"history_indexes": indexed}) as system,
    ):
        await system.install()
        await system.enqueue([{"n": "1"}, {"n": "2"}])
        async with system.work(handler, batch=2, concurrency=2):
            with anyio.fail_after(30):
                await wait_empty(system)
        indexes, rows = _history(url)
    assert sorted(str(p["n"]) for p in done) == ["1", "2"]
    assert rows == 2
    assert bool(indexes) is indexed
