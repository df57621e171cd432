"""Fault fixtures: a migrated database of the test's own, so killing its connections or
stopping it touches no other test's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_postgres import create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo


@pytest.fixture
def own_database(postgres_url: str) -> Iterator[str]:
    """The URL of a fresh database migrated to head, dropped after the test."""
    name = f"fault_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    yield url
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def own_engine(own_database: str) -> AsyncIterator[AsyncEngine]:
    """A small pool on the test's own database."""
    engine = create_engine(own_database, pool_size=4, max_overflow=4)
    yield engine
    await engine.dispose()


def terminate_backends(url: str) -> int:
    """pg_terminate_backend on every other client connection to `url`'s database; how many.
    An autovacuum worker on the database is no connection of the system's: left alone."""
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend'"
        ).fetchone()
    return int(row[0]) if row else 0


def count_jobs(url: str) -> int:
    """Jobs in the table, read on a connection of its own (the pool's may have been killed)."""
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM jobs").fetchone()
    return int(row[0]) if row else 0


def upstream_of(url: str) -> tuple[str, int] | str:
    """Where a proxy forwards to reach `url`'s server: its Unix socket's path, or host and port."""
    parsed = make_url(url)
    port = parsed.port or 5432
    socket_dir = parsed.query.get("host")
    if isinstance(socket_dir, str) and socket_dir.startswith("/"):
        return f"{socket_dir}/.s.PGSQL.{port}"
    return (parsed.host or "127.0.0.1", port)


def through(url: str, port: int) -> str:
    """`url` reaching its server through 127.0.0.1:`port` (a proxy) over TCP."""
    parsed = make_url(url).set(host="127.0.0.1", port=port)
    return parsed.difference_update_query(["host"]).render_as_string(hide_password=False)
