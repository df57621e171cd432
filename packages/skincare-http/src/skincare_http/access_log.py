"""One access line per request, and the request id bound to every line logged while it runs.

It wraps the app's whole ASGI handler, outside the router, so requests no route matches (404,
405) get their line and their id too.
"""

from __future__ import annotations

import logging
import time

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from skincare_core.log_context import bind_fields, unbind_fields
from skincare_http.metrics import ApiMetrics
from skincare_http.request_id import request_id

logger = logging.getLogger(__name__)


class AccessLog:
    """`http.request` (method, route template, status, duration) at INFO after each request,
    and the same figures counted in the API's metrics."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the request with its id bound, then log how it went."""
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        fields = bind_fields(request_id=request_id(scope))
        started = time.perf_counter()
        status = 500  # what the client gets if the app fails before it starts a response

        async def send_recording_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_recording_status)
        finally:
            seconds = time.perf_counter() - started
            # The template (/v1/orders/{order_id}), not the path: one route, one value.
            route = scope.get("path_template") or None
            self.metrics.observe(scope["method"], route, status, seconds)
            logger.info("http.request", extra=_line(scope["method"], route, status, seconds))
            unbind_fields(fields)


def _line(method: str, route: str | None, status: int, seconds: float) -> dict[str, object]:
    return {
        "method": method,
        "route": route,
        "status": status,
        "duration_ms": round(seconds * 1000, 3),
    }
