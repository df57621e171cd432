"""The app factory: each resource's router, auth, the webhook guard, problem+json, OpenAPI."""

from __future__ import annotations

from collections.abc import Sequence

from litestar import Litestar, Router
from litestar.openapi import OpenAPIConfig
from litestar.plugins import PluginProtocol

from skincare_http import problems
from skincare_http.access_log import AccessLog
from skincare_http.auth import jwt_auth, security_components
from skincare_http.body import StrictJsonRequest
from skincare_http.config import ApiServices, ApiSettings
from skincare_http.deps import service_dependencies
from skincare_http.errors import exception_handlers
from skincare_http.header_limit import HeaderLimit
from skincare_http.metrics import ApiMetrics, metrics_route
from skincare_http.request_id import attach_request_id
from skincare_http.routes import cart, catalogue, health, orders, webhooks
from skincare_http.webhook_signature import webhook_signature_guard


def create_app(
    *,
    services: ApiServices,
    settings: ApiSettings,
    metrics: ApiMetrics | None = None,
    plugins: Sequence[PluginProtocol] = (),
) -> Litestar:
    """The API over these services; it builds no adapter of its own. Its metrics go to
    `metrics` (a fresh registry if None) and are served on /metrics; `plugins` are Litestar's
    (the tracing extra gives one)."""
    metrics = metrics or ApiMetrics()
    guard = webhook_signature_guard(
        secret=settings.webhook_secret, tolerance=settings.webhook_tolerance, clock=services.clock
    )
    gateway = Router("/", route_handlers=[webhooks.router], guards=[guard])
    app = Litestar(
        route_handlers=[
            catalogue.router,
            cart.router,
            orders.router,
            gateway,
            health.router,
            metrics_route(metrics),
        ],
        dependencies=service_dependencies(services),
        # The header cap first: it must hold before the token is even read.
        middleware=[HeaderLimit(settings.max_header_bytes), jwt_auth(settings).middleware],
        exception_handlers=exception_handlers(retry_after=settings.retry_after, metrics=metrics),
        before_send=[attach_request_id],
        openapi_config=_openapi(),
        request_class=StrictJsonRequest,
        request_max_body_size=settings.max_body_bytes,
        logging_config=None,
        plugins=list(plugins),
    )
    app.asgi_handler = AccessLog(app.asgi_handler, metrics)
    return app


def _openapi() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Skincare shop API",
        version="1.0.0",
        description=problems.catalogue_markdown(),
        path="/schema",
        components=[security_components()],
    )
