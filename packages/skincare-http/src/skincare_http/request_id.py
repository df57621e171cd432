"""A request id per request: the caller's X-Request-ID if it is a sane one, otherwise a new one.

It is in the scope state, bound to every log line of the request (`access_log`), and returned
on every response as X-Request-ID.
"""

from __future__ import annotations

import re
import uuid

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

REQUEST_ID_HEADER = "X-Request-ID"
_HEADER_NAME = REQUEST_ID_HEADER.lower().encode()
_STATE_KEY = "request_id"
# An id from a proxy or a client is kept only if it cannot forge or flood a log line.
_SANE = re.compile(rb"[A-Za-z0-9._:-]{1,128}")


def request_id(scope: Scope) -> str:
    """This request's id: the incoming one if sane, else made on first use."""
    state = scope.setdefault("state", {})
    if _STATE_KEY not in state:
        state[_STATE_KEY] = _incoming(scope) or uuid.uuid4().hex
    return str(state[_STATE_KEY])


async def attach_request_id(message: Message, scope: Scope) -> None:
    """`before_send` hook: add the request id header to the response start."""
    if message["type"] == "http.response.start":
        MutableScopeHeaders.from_message(message)[REQUEST_ID_HEADER] = request_id(scope)


def _incoming(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == _HEADER_NAME and _SANE.fullmatch(value):
            return value.decode()
    return None
