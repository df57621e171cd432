"""Fixtures for the HTTP API: the app over a backend (in-memory kit by default) and a client.

`backend` is the fixture to override (or parametrize) to run the same tests on other adapters:
it provides the UnitOfWorkFactory the app is built on, seeding, and a view of queued jobs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from http_support import (
    SETTINGS,
    Backend,
    FakeReadiness,
    MemoryBackend,
    Seed,
    seed_shop,
    services_for,
)
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.persistence import UnitOfWorkFactory
from skincare_core.testing import ManualClock
from skincare_http import ApiServices, ApiSettings, create_app


@pytest.fixture
def backend() -> Backend:
    return MemoryBackend()


@pytest.fixture
def uow_factory(backend: Backend) -> UnitOfWorkFactory:
    return backend.uow


@pytest.fixture
def seed(backend: Backend) -> Seed:
    return seed_shop(backend)


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
