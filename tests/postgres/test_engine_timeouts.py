"""The engine carries its timeouts to every connection of a process: its pool's client-side
deadline, and the connect and statement timeouts of the connections opened beside the pool."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from skincare_postgres import create_engine
from skincare_postgres.engine import async_url, client_deadline, engine_timeouts

pytestmark = pytest.mark.anyio

URL = "postgresql+psycopg://u@127.0.0.1:1/shop"
SECOND = timedelta(seconds=1)


async def test_an_engine_keeps_the_timeouts_it_was_made_with() -> None:
    engine = create_engine(URL, connect_timeout=SECOND, statement_timeout=2 * SECOND)
    assert engine_timeouts(engine) == (SECOND, 2 * SECOND)
    assert client_deadline(engine) == 3.0
    autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
    assert engine_timeouts(autocommit) == (SECOND, 2 * SECOND)
    await engine.dispose()


async def test_given_timeouts_win_over_the_engines() -> None:
    engine = create_engine(URL, connect_timeout=SECOND, statement_timeout=2 * SECOND)
    assert engine_timeouts(engine, statement=5 * SECOND) == (SECOND, 5 * SECOND)
    assert engine_timeouts(engine, connect=3 * SECOND) == (3 * SECOND, 2 * SECOND)
    await engine.dispose()


async def test_the_defaults_hold_for_an_engine_made_elsewhere() -> None:
    default = create_engine(URL)
    assert engine_timeouts(default) == (timedelta(seconds=5), timedelta(seconds=30))
    assert client_deadline(default) == 35.0
    foreign = create_async_engine(async_url(URL))
    assert engine_timeouts(foreign) == engine_timeouts(default)
    assert client_deadline(foreign) is None
    await default.dispose()
    await foreign.dispose()
