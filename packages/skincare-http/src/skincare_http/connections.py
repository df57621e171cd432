"""The request and connection types of code that reads no user, auth or state from them.

Litestar's request and connection generics are invariant: `object` says "not read here" and keeps
the checks on, where `Any` would switch them off.
"""

from __future__ import annotations

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.handlers import BaseRouteHandler

PlainRequest = Request[object, object, State]
PlainConnection = ASGIConnection[BaseRouteHandler, object, object, State]
