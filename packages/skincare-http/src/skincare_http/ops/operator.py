"""Who may use the ops page: the bearer of the ops token, or of a JWT whose `role` is admin.

The credential comes in an `Authorization: Bearer` header or, for a browser, in the cookie
the sign-in form sets. A valid token without the admin role is a 403, no token a 401; a wrong
one is a 401 that counts against the client's address in the sign-in limit.
"""

from __future__ import annotations

import hmac

from litestar.connection import ASGIConnection
from litestar.datastructures import Address, State
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.security.jwt import Token

from skincare_http.auth import ALGORITHM
from skincare_http.ops.sign_in_limit import SignInLimit

COOKIE = "skincare_ops"
OpsConnection = ASGIConnection[BaseRouteHandler, object, object, State]
ADMIN = "admin"


class OperatorGuard:
    """A Litestar guard admitting operators only."""

    def __init__(
        self, *, jwt_secret: str, jwt_issuer: str, ops_token: str | None, limit: SignInLimit
    ) -> None:
        self._secret = jwt_secret
        self._issuer = jwt_issuer
        self._ops_token = ops_token
        self._limit = limit

    def __deepcopy__(self, memo: dict[int, object]) -> OperatorGuard:
        # Litestar copies a router's guards as it registers them; the sign-in limit's counts
        # must stay one for the whole app (the sign-in form checks through this same guard).
        return self

    def __call__(self, connection: OpsConnection, _: BaseRouteHandler) -> None:
        """Raise 401 without a usable credential, 403 for a signed-in non-operator."""
        self.check(_credential(connection), client_address(connection.client))

    def check(self, credential: str, address: str) -> None:
        """Raise 401 unless `credential` is the ops token or a valid JWT, 403 unless an admin's,
        429 while `address` is locked out for failing too often."""
        if not credential:
            raise NotAuthorizedException("an operator token is required")
        self._limit.check(address)
        try:
            self._admit(credential)
        except NotAuthorizedException:
            self._limit.failed(address)
            raise

    def _admit(self, credential: str) -> None:
        if self._is_ops_token(credential):
            return
        if self._role(credential) != ADMIN:
            raise PermissionDeniedException("operators only")

    def _is_ops_token(self, credential: str) -> bool:
        # Bytes: compare_digest refuses str holding anything but ASCII.
        expected = (self._ops_token or "").encode()
        return bool(expected) and hmac.compare_digest(credential.encode(), expected)

    def _role(self, encoded: str) -> object:
        if not encoded.isascii():
            raise NotAuthorizedException("the token is not valid")
        try:
            token = Token.decode(encoded, self._secret, ALGORITHM, issuer=[self._issuer])
        except NotAuthorizedException:
            raise NotAuthorizedException("the token is not valid") from None
        return token.extras.get("role")


def _credential(connection: OpsConnection) -> str:
    scheme, _, value = connection.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return connection.cookies.get(COOKIE, "")


def client_address(client: Address | None) -> str:
    """The address a request came from, given its `connection.client` (empty when the server
    does not say)."""
    return client.host if client else ""
