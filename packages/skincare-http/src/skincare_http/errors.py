"""Every exception becomes a problem+json response here, and only here."""

from __future__ import annotations

import logging
import re
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, NotAuthorizedException, ValidationException
from litestar.types import ExceptionHandlersMap

from skincare_core.shop.errors import CartEmpty, OrderNotFound, OutOfStock, ProductNotFound
from skincare_core.shop.webhooks import InvalidPaymentEvent
from skincare_http import problems as p
from skincare_http.request_id import request_id
from skincare_http.wire import FieldError, Problem, unstructure

logger = logging.getLogger(__name__)


class InvalidSignature(Exception):
    """The webhook's signature headers are missing, wrong or stale."""


class NotReady(Exception):
    """A dependency the API needs is unreachable."""


DOMAIN_PROBLEMS: dict[type[Exception], p.ProblemType] = {
    CartEmpty: p.CART_EMPTY,
    OutOfStock: p.OUT_OF_STOCK,
    OrderNotFound: p.ORDER_NOT_FOUND,
    ProductNotFound: p.PRODUCT_NOT_FOUND,
    InvalidPaymentEvent: p.INVALID_PAYMENT_EVENT,
    InvalidSignature: p.INVALID_SIGNATURE,
    NotReady: p.NOT_READY,
}
# Litestar reports a missing header / query parameter only in its message.
_MISSING_PARAMETER = re.compile(r"Missing required (?P<source>\w+) parameter '(?P<name>[^']+)'")
_MISSING_FIELD = re.compile(r"missing required field `(?P<name>[^`]+)`")
HTTP_PROBLEMS = {
    t.status: t for t in (p.INVALID_REQUEST, p.NOT_FOUND, p.METHOD_NOT_ALLOWED, p.PAYLOAD_TOO_LARGE)
}


def problem_response(
    request: Request[Any, Any, Any],
    kind: p.ProblemType,
    detail: str,
    errors: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[Any]:
    """The problem+json response for `kind`."""
    problem = Problem(
        kind.uri, kind.title, kind.status, detail, request.url.path, request_id(request.scope),
        errors,
    )  # fmt: skip
    return Response(
        unstructure(problem),
        status_code=kind.status,
        media_type=p.PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _domain(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    kind = next(DOMAIN_PROBLEMS[t] for t in type(exc).__mro__ if t in DOMAIN_PROBLEMS)
    return problem_response(request, kind, str(exc) or kind.title)


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = [
        _field_error(e) for e in (exc.extra if isinstance(exc.extra, list) else [])
        if isinstance(e, dict)
    ]  # fmt: skip
    if missing := _MISSING_PARAMETER.match(exc.detail):
        errors.append(FieldError(missing["name"], missing["source"], "required"))
    fields = ", ".join(f"{e.field}: {e.message}" for e in errors)
    return problem_response(request, p.INVALID_REQUEST, fields or exc.detail, errors or None)


def _field_error(error: dict[str, Any]) -> FieldError:
    message = str(error.get("message"))
    key = str(error.get("key", "body"))
    # msgspec names a missing body field only in its message, and Litestar then says "data".
    if key == "data" and (missing := _MISSING_FIELD.search(message)):
        key = missing["name"]
    raw_source = error.get("source", "body")
    source = str(getattr(raw_source, "value", raw_source))  # Litestar's ParamType enum or "body"
    if source == "header" and "_" in key:
        # Litestar reports a header by its Python name: idempotency_key -> Idempotency-Key.
        key = "-".join(part.capitalize() for part in key.split("_"))
    return FieldError(key, source, message)


def _unauthorized(request: Request[Any, Any, Any], exc: NotAuthorizedException) -> Response[Any]:
    challenge = {"WWW-Authenticate": 'Bearer realm="skincare"'}
    return problem_response(request, p.UNAUTHORIZED, exc.detail, headers=challenge)


def _http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if exc.status_code >= 500:
        return _unexpected(request, exc)
    kind = HTTP_PROBLEMS.get(exc.status_code)
    if kind is None:
        kind = p.ProblemType(f"http-{exc.status_code}", exc.detail, exc.status_code, exc.detail)
    return problem_response(request, kind, exc.detail, headers=exc.headers)


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    rid = request_id(request.scope)
    logger.exception(
        "http.unhandled_error",
        exc_info=exc,
        extra={"request_id": rid, "method": request.method, "path": request.url.path},
    )
    return problem_response(
        request, p.INTERNAL_ERROR, f"Unexpected error; quote request id {rid} when reporting it."
    )


def exception_handlers() -> ExceptionHandlersMap:
    """The app's exception handlers: domain errors, Litestar's HTTP errors, anything else."""
    handlers: ExceptionHandlersMap = dict.fromkeys(DOMAIN_PROBLEMS, _domain)
    handlers[ValidationException] = _validation
    handlers[NotAuthorizedException] = _unauthorized
    handlers[HTTPException] = _http
    handlers[Exception] = _unexpected
    return handlers
