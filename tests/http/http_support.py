"""Helpers shared by the HTTP tests: backends, tokens, signed webhook requests."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, Protocol

from attrs import define, field

from skincare_core.jobs.job import Job
from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.shop.models import Product, User
from skincare_core.shop.ports import Clock
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import InMemoryDatabase
from skincare_http import ApiServices, ApiSettings, Readiness, issue_token, sign_webhook

JWT_SECRET = "test-jwt-secret-with-at-least-32-bytes!"
JWT_ISSUER = "skincare-test"
WEBHOOK_SECRET = "test-webhook-secret"


class Backend(Protocol):
    """What the tests need from a storage wiring."""

    @property
    def uow(self) -> UnitOfWorkFactory: ...

    async def add_user(self, email: str) -> User: ...
    async def add_product(self, sku: str, name: str, price_rupiah: int, stock: int) -> Product: ...
    async def jobs(self) -> list[Job]: ...


@define
class MemoryBackend:
    """Core's in-memory database whose outbox feeds an in-memory queue."""

    queue: InMemoryQueue = field(factory=InMemoryQueue)
    db: InMemoryDatabase = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.db = InMemoryDatabase(outbox_sink=self.queue, routes=SHOP_ROUTES)

    @property
    def uow(self) -> UnitOfWorkFactory:
        return self.db

    async def add_user(self, email: str) -> User:
        return self.db.add_user(email)

    async def add_product(self, sku: str, name: str, price_rupiah: int, stock: int) -> Product:
        return self.db.add_product(sku, name, price_rupiah, stock)

    async def jobs(self) -> list[Job]:
        return self.queue.jobs()


class FakeReadiness:
    """A readiness check the test switches off."""

    def __init__(self) -> None:
        self.up = True

    async def ping(self) -> None:
        if not self.up:
            raise ConnectionRefusedError("connection to 10.0.0.5:5432 refused")


@define
class Seed:
    """Two users and two products."""

    alice: User
    bob: User
    serum: Product
    toner: Product


def bearer(user_id: int, ttl: timedelta = timedelta(minutes=5)) -> dict[str, str]:
    """Authorization header for a user."""
    return {"Authorization": f"Bearer {issue_token(JWT_SECRET, JWT_ISSUER, user_id, ttl)}"}


def signed(
    event: dict[str, Any], stamp: int, *, secret: str = WEBHOOK_SECRET
) -> tuple[bytes, dict[str, str]]:
    """A webhook body and the headers signing it at `stamp`."""
    body = json.dumps(event).encode()
    headers = {"X-Timestamp": str(stamp), "X-Signature": sign_webhook(secret, stamp, body)}
    return body, {**headers, "Content-Type": "application/json"}


SETTINGS = ApiSettings(jwt_secret=JWT_SECRET, jwt_issuer=JWT_ISSUER, webhook_secret=WEBHOOK_SECRET)


async def seed_shop(backend: Backend) -> Seed:
    """Two users, a serum (stock 5) and a toner (stock 1)."""
    return Seed(
        alice=await backend.add_user("alice@example.com"),
        bob=await backend.add_user("bob@example.com"),
        serum=await backend.add_product("SRM-01", "Niacinamide serum", 150_000, 5),
        toner=await backend.add_product("TNR-01", "Hydrating toner", 90_000, 1),
    )


def services_for(uow: UnitOfWorkFactory, clock: Clock, readiness: Readiness) -> ApiServices:
    """Core's services over `uow`."""
    return ApiServices(
        checkout=CheckoutService(uow=uow, clock=clock),
        webhooks=PaymentWebhookService(uow=uow),
        shop=ShopService(uow=uow),
        readiness=readiness,
        clock=clock,
    )
