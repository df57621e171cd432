"""Fixtures for the HTTP API: the app over a backend (in-memory kit by default) and a client.

`backend` is the fixture to override (or parametrize) to run the same tests on other adapters:
it provides the UnitOfWorkFactory the app is built on, seeding, and a view of queued jobs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from http_support import (
    JWT_ISSUER,
    JWT_SECRET,
    WEBHOOK_SECRET,
    Backend,
    FakeReadiness,
    MemoryBackend,
    Seed,
)
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.checkout import CheckoutService
from skincare_core.persistence import UnitOfWorkFactory
from skincare_core.shop import ShopService
from skincare_core.testing import ManualClock
from skincare_core.webhooks import PaymentWebhookService
from skincare_http import ApiServices, ApiSettings, create_app


@pytest.fixture
def backend() -> Backend:
    return MemoryBackend()


@pytest.fixture
def uow_factory(backend: Backend) -> UnitOfWorkFactory:
    return backend.uow


@pytest.fixture
def seed(backend: Backend) -> Seed:
    return Seed(
        alice=backend.add_user("alice@example.com"),
        bob=backend.add_user("bob@example.com"),
        serum=backend.add_product("SRM-01", "Niacinamide serum", 150_000, 5),
        toner=backend.add_product("TNR-01", "Hydrating toner", 90_000, 1),
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def readiness() -> FakeReadiness:
    return FakeReadiness()


@pytest.fixture
def settings() -> ApiSettings:
    return ApiSettings(jwt_secret=JWT_SECRET, jwt_issuer=JWT_ISSUER, webhook_secret=WEBHOOK_SECRET)


@pytest.fixture
def services(
    uow_factory: UnitOfWorkFactory, clock: ManualClock, readiness: FakeReadiness
) -> ApiServices:
    return ApiServices(
        checkout=CheckoutService(uow=uow_factory, clock=clock),
        webhooks=PaymentWebhookService(uow=uow_factory),
        shop=ShopService(uow=uow_factory),
        readiness=readiness,
        clock=clock,
    )


@pytest.fixture
def app(services: ApiServices, settings: ApiSettings) -> Litestar:
    return create_app(services=services, settings=settings)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=app) as test_client:
        yield test_client
