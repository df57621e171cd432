"""State-changing requests come from the ops page's own origin only.

Cookies are not tied to a port and SameSite counts every port of a host as the same site, so a
page served from another port of the same host rides the operator's cookies. A request that
changes state is refused (403) when the browser says it comes from elsewhere: `Sec-Fetch-Site`
other than same-origin, or an `Origin` whose scheme, host and port differ from the request's
own. A client that sends neither is no browser, and still needs the CSRF token.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from litestar.datastructures import Headers
from litestar.enums import ScopeType
from litestar.exceptions import PermissionDeniedException
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, str, int]


class SameOrigin(ASGIMiddleware):
    """Refuse (403) a state-changing request a browser sent from another origin."""

    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        """Pass on safe requests, and the others when they come from this origin."""
        if scope.get("method", "GET") not in SAFE_METHODS and not from_own_origin(scope):
            raise PermissionDeniedException("cross-origin request refused")
        await next_app(scope, receive, send)


def from_own_origin(scope: Scope) -> bool:
    """Whether nothing in the request says it was sent from an origin other than its own."""
    headers = Headers.from_scope(scope)
    site = headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    own = _origin(f"{scope['scheme']}://{headers.get('host', '')}")
    return own is not None and _origin(origin) == own


def _origin(url: str) -> Origin | None:
    """(scheme, host, port) of `url`, the port defaulted; None for anything else (`null`)."""
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return parts.scheme, parts.hostname, port
