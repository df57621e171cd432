"""The app factory: routes, auth, the webhook guard, problem+json errors, OpenAPI."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.openapi import OpenAPIConfig

from skincare_http import problems
from skincare_http.auth import SECURITY, jwt_auth, security_components
from skincare_http.config import ApiServices, ApiSettings
from skincare_http.deps import service_dependencies, user_dependencies
from skincare_http.errors import exception_handlers
from skincare_http.request_id import attach_request_id
from skincare_http.routes import cart, catalogue, health, orders, webhooks
from skincare_http.webhook_signature import webhook_signature_guard


def create_app(*, services: ApiServices, settings: ApiSettings) -> Litestar:
    """The API over these services; it builds no adapter of its own."""
    signed_in = Router(
        "/v1",
        route_handlers=[
            catalogue.list_products, cart.get_cart, cart.set_cart_item, orders.place_order,
            orders.get_order,
        ],
        dependencies=user_dependencies(),
        security=SECURITY,
    )  # fmt: skip
    guard = webhook_signature_guard(
        secret=settings.webhook_secret, tolerance=settings.webhook_tolerance, clock=services.clock
    )
    gateway = Router("/v1/payments", route_handlers=[webhooks.receive_payment], guards=[guard])
    return Litestar(
        route_handlers=[signed_in, gateway, health.healthz, health.readyz],
        dependencies=service_dependencies(services),
        middleware=[jwt_auth(settings).middleware],
        exception_handlers=exception_handlers(),
        before_send=[attach_request_id],
        openapi_config=_openapi(),
        request_max_body_size=settings.max_body_bytes,
        logging_config=None,
    )


def _openapi() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Skincare shop API",
        version="1.0.0",
        description=problems.catalogue_markdown(),
        path="/schema",
        components=[security_components()],
    )
