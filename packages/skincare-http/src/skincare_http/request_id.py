"""A request id per request: in the scope state, on every response as X-Request-ID."""

from __future__ import annotations

import uuid

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

REQUEST_ID_HEADER = "X-Request-ID"
_STATE_KEY = "request_id"


def request_id(scope: Scope) -> str:
    """This request's id, made on first use."""
    state = scope.setdefault("state", {})
    if _STATE_KEY not in state:
        state[_STATE_KEY] = uuid.uuid4().hex
    return str(state[_STATE_KEY])


async def attach_request_id(message: Message, scope: Scope) -> None:
    """`before_send` hook: add the request id header to the response start."""
    if message["type"] == "http.response.start":
        MutableScopeHeaders.from_message(message)[REQUEST_ID_HEADER] = request_id(scope)
