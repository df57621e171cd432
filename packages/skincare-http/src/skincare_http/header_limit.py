"""A cap on the size of a request's headers, checked before sign-in or any handler.

uvicorn with httptools passes headers of any size on; a megabyte of them costs memory and
parsing on every layer after this one, so the request is refused here with a 431.
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send


class HeadersTooLarge(Exception):
    """The request's headers (names and values together) are over the limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"request headers are {size} bytes, over the {limit}-byte limit")
        self.size = size
        self.limit = limit


class HeaderLimit(ASGIMiddleware):
    """Refuse (HeadersTooLarge) a request whose headers add up to more than `max_bytes`."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        """Pass the request on if its headers fit."""
        size = sum(len(name) + len(value) for name, value in scope["headers"])
        if size > self.max_bytes:
            raise HeadersTooLarge(size, self.max_bytes)
        await next_app(scope, receive, send)
