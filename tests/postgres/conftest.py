"""Postgres fixtures: one migrated database per session, emptied before every test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_postgres import PostgresDatabase, PostgresQueue, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.schema import metadata
from tests.postgres.pg_shop import Shop

_TABLES = ", ".join(table.name for table in metadata.sorted_tables)


@pytest.fixture(scope="session")
def new_database(postgres_url: str) -> Iterator[Callable[[], str]]:
    """Makes empty databases on the test server (dropped at the end of the session)."""
    made: list[str] = []

    def make() -> str:
        name = f"skincare_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return make_url(postgres_url).set(database=name).render_as_string(hide_password=False)

    yield make
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def shop_url(new_database: Callable[[], str]) -> str:
    """A database migrated to head, shared by the session's tests."""
    url = new_database()
    upgrade(url)
    return url


@pytest.fixture
async def engine(shop_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on the shop database, every table emptied first."""
    engine = create_engine(shop_url, pool_size=25, max_overflow=40)
    async with engine.begin() as conn:
        await conn.execute(text(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE"))
    yield engine
    await engine.dispose()


@pytest.fixture
def db(engine: AsyncEngine) -> PostgresDatabase:
    """The unit-of-work factory on the emptied database."""
    return PostgresDatabase(engine)


@pytest.fixture
async def queue(engine: AsyncEngine) -> AsyncIterator[PostgresQueue]:
    """A queue with a 1 s lease and a 0.5 s idle poll."""
    async with PostgresQueue(
        engine, visibility_timeout=timedelta(seconds=1), poll_interval=timedelta(seconds=0.5)
    ) as queue:
        yield queue


@pytest.fixture
def shop(engine: AsyncEngine) -> Shop:
    """Seeding and inspection helpers on the emptied database."""
    return Shop(engine)
