"""What the app is built from: the core services it calls and its settings."""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.ports import Clock
from skincare_core.shop.system_clock import SystemClock
from skincare_core.shop.webhooks import PaymentWebhookService


@runtime_checkable
class Readiness(Protocol):
    """Whatever the API needs reachable to serve traffic (the database)."""

    async def ping(self) -> None:
        """Return when reachable; raise any exception when not."""


@frozen
class ApiServices:
    """The core services the handlers call, plus the readiness check and the clock."""

    checkout: CheckoutService
    webhooks: PaymentWebhookService
    shop: ShopService
    readiness: Readiness
    clock: Clock = field(factory=SystemClock)


@frozen
class ApiSettings:
    """Secrets and limits of the HTTP edge."""

    jwt_secret: str = field(repr=False)
    jwt_issuer: str
    webhook_secret: str = field(repr=False)
    webhook_tolerance: timedelta = timedelta(minutes=5)
    max_body_bytes: int = 64 * 1024
    # All request headers together: a token and the usual headers take well under 2 KiB.
    max_header_bytes: int = 16 * 1024
    # What a 503 tells clients to wait before retrying; the database is back within about 1 s.
    retry_after: timedelta = timedelta(seconds=1)
