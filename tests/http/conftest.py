"""Fixtures for the HTTP API: the app over a backend (in-memory kit by default) and a client.

`backend` is the fixture to override (or parametrize) to run the same tests on other adapters:
it provides the UnitOfWorkFactory the app is built on, seeding, and a view of queued jobs.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.engine import make_url

from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_core.testing.shop import ManualClock
from skincare_http import ApiServices, ApiSettings, create_app
from skincare_postgres import create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from tests.http.http_support import (
    SETTINGS,
    Backend,
    FakeReadiness,
    MemoryBackend,
    Seed,
    seed_shop,
    services_for,
)
from tests.http.pg_backend import PostgresBackend


@pytest.fixture
def backend() -> Backend:
    return MemoryBackend()


@pytest.fixture(scope="session")
def http_database_url(postgres_url: str) -> str:
    """A database of its own on the session's server, migrated to head."""
    name = f"skincare_http_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    return url


@pytest.fixture
async def postgres_backend(http_database_url: str) -> AsyncIterator[Backend]:
    """The Postgres adapters on the migrated database, every table emptied first."""
    engine = create_engine(http_database_url)
    backend = PostgresBackend(engine)
    await backend.empty()
    yield backend
    await engine.dispose()


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.slow)])
def any_backend(request: pytest.FixtureRequest) -> Backend:
    """Each backend in turn: modules that must hold on both override `backend` with this."""
    if request.param == "memory":
        return MemoryBackend()
    backend: Backend = request.getfixturevalue("postgres_backend")
    return backend


@pytest.fixture
def uow_factory(backend: Backend) -> UnitOfWorkFactory:
    return backend.uow


@pytest.fixture
async def seed(backend: Backend) -> Seed:
    return await seed_shop(backend)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def readiness() -> FakeReadiness:
    return FakeReadiness()


@pytest.fixture
def settings() -> ApiSettings:
    return SETTINGS


@pytest.fixture
def services(
    uow_factory: UnitOfWorkFactory, clock: ManualClock, readiness: FakeReadiness
) -> ApiServices:
    return services_for(uow_factory, clock, readiness)


@pytest.fixture
def app(services: ApiServices, settings: ApiSettings) -> Litestar:
    return create_app(services=services, settings=settings)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=app) as test_client:
        yield test_client
