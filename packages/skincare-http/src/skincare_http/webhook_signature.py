"""The payment gateway's signature: HMAC-SHA256 of "<timestamp>.<raw body>", hex, "sha256=".

Checked on the raw bytes, in constant time, before the body is parsed or anything is stored.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import timedelta

from litestar import Request
from litestar.handlers import BaseRouteHandler
from litestar.types import Guard

from skincare_core.shop.ports import Clock
from skincare_http.connections import PlainConnection
from skincare_http.errors import InvalidSignature

TIMESTAMP_HEADER = "X-Timestamp"
SIGNATURE_HEADER = "X-Signature"
_TIMESTAMP = re.compile(r"[0-9]{1,12}")


def sign_webhook(secret: str, timestamp: int, body: bytes) -> str:
    """The X-Signature value for `body` sent at `timestamp` (unix seconds)."""
    message = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def verify_signature(secret: str, timestamp: str | None, signature: str | None, body: bytes) -> int:
    """The timestamp, if `signature` signs `body` at it; InvalidSignature otherwise."""
    if not timestamp or not signature:
        raise InvalidSignature(f"{TIMESTAMP_HEADER} and {SIGNATURE_HEADER} are required")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise InvalidSignature(f"{TIMESTAMP_HEADER} must be unix seconds")
    expected = sign_webhook(secret, int(timestamp), body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise InvalidSignature("signature does not match")
    return int(timestamp)


def webhook_signature_guard(*, secret: str, tolerance: timedelta, clock: Clock) -> Guard:
    """A route guard: the signature must match and be within `tolerance` of now, either way."""
    window = tolerance.total_seconds()

    # A closure, not an object: Litestar deep-copies guard objects (and so their clock).
    async def guard(connection: PlainConnection, _: BaseRouteHandler) -> None:
        if not isinstance(connection, Request):
            raise InvalidSignature("not an HTTP request")
        body = await connection.body()
        headers = connection.headers
        stamp = verify_signature(
            secret, headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER), body
        )
        if abs(clock.now().timestamp() - stamp) > window:
            raise InvalidSignature("timestamp is outside the accepted window")

    return guard
