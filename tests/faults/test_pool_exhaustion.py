"""A pool held exhausted by idle connections. Invariants: an enqueue waits no longer than the
pool's timeout and fails as `Unavailable` (the API's 503), stores nothing, and succeeds once
a connection is free again."""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import new_job
from skincare_postgres import PostgresSink, create_engine
from tests.faults.conftest import count_jobs

pytestmark = pytest.mark.anyio


async def test_an_exhausted_pool_fails_the_enqueue_in_time_then_recovers(
    own_database: str,
) -> None:
    engine = create_engine(own_database, pool_size=2, max_overflow=0, pool_timeout=0.5)
    sink = PostgresSink(engine)
    job = new_job("noop")
    try:
        async with AsyncExitStack() as held:
            for _ in range(2):
                await held.enter_async_context(engine.connect())
            with anyio.fail_after(3), pytest.raises(Unavailable):
                await sink.enqueue_many([Envelope(job, "default")])
            assert count_jobs(own_database) == 0
        with anyio.fail_after(3):
            assert await sink.enqueue_many([Envelope(job, "default")]) == 1
    finally:
        await engine.dispose()
    assert count_jobs(own_database) == 1
