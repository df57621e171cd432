"""Core's steering contract (pauses, run now, cancel) on the Postgres backend, and a pause
kept in the database through a restart of every process."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.testing.jobs.steering_contract import SteeringContract
from skincare_postgres import PostgresPauses, postgres_backend


class TestPostgresSteeringContract(SteeringContract):
    @pytest.fixture
    async def backend(self, engine: AsyncEngine) -> AsyncIterator[Backend]:
        async with postgres_backend(engine, poll_interval=timedelta(seconds=0.2)) as backend:
            yield backend


@pytest.mark.anyio
async def test_a_pause_is_kept_in_the_database(engine: AsyncEngine) -> None:
    await PostgresPauses(engine).pause(queue="default")
    await PostgresPauses(engine).pause(job_type="send_confirmation_email")
    paused = await PostgresPauses(engine).paused()
    assert (paused.queues, paused.types) == (
        frozenset({"default"}),
        frozenset({"send_confirmation_email"}),
    )
