"""Bearer JWT (HS256) sign-in: the token's `sub` is the user id."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from litestar import Request
from litestar.datastructures import State
from litestar.exceptions import NotAuthorizedException
from litestar.middleware.authentication import AuthenticationResult
from litestar.openapi.spec import Components, SecurityScheme
from litestar.security.jwt import JWTAuth, JWTAuthenticationMiddleware, Token

from skincare_http.config import ApiSettings
from skincare_http.connections import PlainConnection

ALGORITHM = "HS256"
SECURITY_SCHEME = "BearerToken"
SECURITY: list[dict[str, list[str]]] = [{SECURITY_SCHEME: []}]
# Reachable without a token: the gateway's webhook, the probes and the OpenAPI document.
PUBLIC_PATHS = ["^/v1/payments/webhook$", "^/healthz$", "^/readyz$", "^/metrics$", "^/schema"]
# A user id is ASCII digits (str.isdigit also takes superscripts and Arabic-Indic digits),
# within PostgreSQL's bigint.
_USER_ID = re.compile(r"[1-9][0-9]{0,18}")
MAX_USER_ID = 2**63 - 1


def issue_token(
    secret: str, issuer: str, user_id: int, ttl: timedelta, *, role: str | None = None
) -> str:
    """A signed token for `user_id`, valid for `ttl`; with `role` (admin: an operator) too."""
    now = datetime.now(UTC)
    extras = {} if role is None else {"role": role}
    token = Token(sub=str(user_id), exp=now + ttl, iat=now, iss=issuer, extras=extras)
    return token.encode(secret, ALGORITHM)


class BearerJWTMiddleware(JWTAuthenticationMiddleware):
    """Litestar's JWT middleware, but only for the `Bearer` scheme."""

    async def authenticate_request(self, connection: PlainConnection) -> AuthenticationResult:
        """Decode the Bearer token; NotAuthorizedException when missing or bad."""
        scheme, _, token = connection.headers.get(self.auth_header, "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise NotAuthorizedException("a Bearer token is required")
        return await self.authenticate_token(encoded_token=token.strip(), connection=connection)


async def _user_id(token: Token, connection: PlainConnection) -> int | None:
    # None makes the middleware answer 401.
    return user_id_of(token.sub)


def user_id_of(sub: str) -> int | None:
    """The user id a token's `sub` names, or None when it is not a positive bigint in ASCII."""
    if not _USER_ID.fullmatch(sub):
        return None
    user_id = int(sub)
    return user_id if user_id <= MAX_USER_ID else None


def jwt_auth(settings: ApiSettings) -> JWTAuth[int, Token]:
    """The auth config: HS256, the settings' issuer, expiry and `sub` required."""
    return JWTAuth[int, Token](
        retrieve_user_handler=_user_id,
        token_secret=settings.jwt_secret,
        algorithm=ALGORITHM,
        accepted_issuers=[settings.jwt_issuer],
        require_claims=["exp", "sub", "iss"],
        exclude=PUBLIC_PATHS,
        authentication_middleware_class=BearerJWTMiddleware,
    )


def security_components() -> Components:
    """The OpenAPI security scheme the signed-in routes reference."""
    scheme = SecurityScheme(type="http", scheme="bearer", bearer_format="JWT")
    return Components(security_schemes={SECURITY_SCHEME: scheme})


def current_user_id(request: Request[int, Token, State]) -> int:
    """Dependency: the signed-in user's id."""
    return request.user
