"""What handlers get injected, by name: the core services and the signed-in user's id.

`signed_in_router` gives a resource's handlers the Bearer scheme and the `user_id` dependency.
"""

from __future__ import annotations

from litestar import Router
from litestar.di import NamedDependency, Provide
from litestar.types import ControllerRouterHandler

from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_http.auth import SECURITY, current_user_id
from skincare_http.config import ApiServices, Readiness

Checkout = NamedDependency[CheckoutService]
Shop = NamedDependency[ShopService]
Webhooks = NamedDependency[PaymentWebhookService]
Ready = NamedDependency[Readiness]
UserId = NamedDependency[int]


def service_dependencies(services: ApiServices) -> dict[str, Provide]:
    """Providers for `checkout`, `webhooks`, `shop` and `readiness`."""

    def value(service: object) -> Provide:
        return Provide(lambda: service, use_cache=True, sync_to_thread=False)

    return {
        "checkout": value(services.checkout),
        "webhooks": value(services.webhooks),
        "shop": value(services.shop),
        "readiness": value(services.readiness),
    }


def user_dependencies() -> dict[str, Provide]:
    """The provider for `user_id`, for signed-in routes."""
    return {"user_id": Provide(current_user_id, sync_to_thread=False)}


def signed_in_router(path: str, *handlers: ControllerRouterHandler) -> Router:
    """A router for handlers that need a Bearer token and may depend on `user_id`."""
    return Router(
        path, route_handlers=list(handlers), dependencies=user_dependencies(), security=SECURITY
    )
