"""End-to-end fixtures: a fresh migrated database and a seeded shop for the real processes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest

from skincare_postgres import upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_services.seed import SeededShop, seed_shop


@pytest.fixture
def database_url(postgres_url: str) -> Iterator[str]:
    """A new, migrated database on the shared server, dropped afterwards."""
    name = f"e2e_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    head, _, query = postgres_url.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{name}?{query}"
    upgrade(url)
    yield url
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def shop(database_url: str) -> SeededShop:
    """20 users and a well-stocked catalogue."""
    return anyio.run(lambda: seed_shop(database_url, users=20, stock=10_000))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Where the processes write mail, invoices and logs."""
    return tmp_path
