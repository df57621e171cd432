"""Headers on every ops response: no page may be framed (a framed purge confirmation is a
click away from a purge), sniffed into another type, named in a referrer, or cached (pages
show job payloads and errors)."""

from __future__ import annotations

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    # Scripts only from the page's own files (/ops/live.js): a stored `<script>` that slipped
    # past the escaping would not run either.
    "Content-Security-Policy": (
        "frame-ancestors 'none'; script-src 'self'; object-src 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: under it the browser sends `Origin: null` with the page's own forms.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


async def add_page_headers(message: Message, scope: Scope) -> None:
    """A `before_send` hook: set the page headers on a response's start."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in PAGE_HEADERS.items():
            headers[name] = value
