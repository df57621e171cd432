"""Every exception becomes a problem+json response here, and only here."""

from __future__ import annotations

import logging
import math
from datetime import timedelta

from litestar import Response
from litestar.exceptions import HTTPException, NotAuthorizedException, ValidationException
from litestar.types import ExceptionHandler, ExceptionHandlersMap

from skincare_core.jobs.errors import Unavailable
from skincare_core.shop.errors import (
    CartEmpty,
    OrderNotFound,
    OutOfStock,
    ProductNotFound,
    UserNotFound,
)
from skincare_core.shop.webhooks import InvalidPaymentEvent
from skincare_http import problems as p
from skincare_http.body import InvalidBody
from skincare_http.connections import PlainRequest
from skincare_http.header_limit import HeadersTooLarge
from skincare_http.metrics import ApiMetrics
from skincare_http.request_id import request_id
from skincare_http.validation import field_errors
from skincare_http.wire import FieldError, Problem, unstructure

logger = logging.getLogger(__name__)


class InvalidSignature(Exception):
    """The webhook's signature headers are missing, wrong or stale."""


class NotReady(Exception):
    """A dependency the API needs is unreachable."""


# The one table of which exception answers which problem (each route lists its own in OpenAPI).
DOMAIN_PROBLEMS: dict[type[Exception], p.ProblemType] = {
    CartEmpty: p.CART_EMPTY,
    OutOfStock: p.OUT_OF_STOCK,
    OrderNotFound: p.ORDER_NOT_FOUND,
    ProductNotFound: p.PRODUCT_NOT_FOUND,
    InvalidPaymentEvent: p.INVALID_PAYMENT_EVENT,
    InvalidSignature: p.INVALID_SIGNATURE,
    HeadersTooLarge: p.HEADERS_TOO_LARGE,
    NotReady: p.NOT_READY,
}
HTTP_PROBLEMS = {
    t.status: t for t in (p.INVALID_REQUEST, p.NOT_FOUND, p.METHOD_NOT_ALLOWED, p.PAYLOAD_TOO_LARGE)
}
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="skincare"'}


def problem_response(
    request: PlainRequest,
    kind: p.ProblemType,
    detail: str,
    *,
    errors: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[object]:
    """The problem+json response for `kind`."""
    problem = Problem(
        type=kind.uri,
        title=kind.title,
        status=kind.status,
        detail=detail,
        instance=request.url.path,
        request_id=request_id(request.scope),
        errors=errors,
    )
    return Response(
        unstructure(problem),
        status_code=kind.status,
        media_type=p.PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _domain(request: PlainRequest, exc: Exception) -> Response[object]:
    kind = next(DOMAIN_PROBLEMS[t] for t in type(exc).__mro__ if t in DOMAIN_PROBLEMS)
    return problem_response(request, kind, str(exc) or kind.title)


def _invalid(request: PlainRequest, errors: list[FieldError], fallback: str) -> Response[object]:
    detail = ", ".join(f"{e.field}: {e.message}" for e in errors) or fallback
    return problem_response(request, p.INVALID_REQUEST, detail, errors=errors or None)


def _validation(request: PlainRequest, exc: ValidationException) -> Response[object]:
    return _invalid(request, field_errors(request, exc), exc.detail)


def _invalid_body(request: PlainRequest, exc: InvalidBody) -> Response[object]:
    return _invalid(request, exc.errors, str(exc))


def _unauthorized(
    request: PlainRequest, exc: NotAuthorizedException | UserNotFound
) -> Response[object]:
    detail = (
        exc.detail if isinstance(exc, NotAuthorizedException) else "the token's user is unknown"
    )
    return problem_response(request, p.UNAUTHORIZED, detail, headers=CHALLENGE)


def _unavailable_handler(
    retry_after: timedelta, metrics: ApiMetrics
) -> ExceptionHandler[Unavailable]:
    seconds = max(1, math.ceil(retry_after.total_seconds()))

    def unavailable(request: PlainRequest, exc: Unavailable) -> Response[object]:
        metrics.unavailable()
        # Expected during an outage: one line per request, no traceback.
        logger.warning("http.service_unavailable", extra=_request_fields(request, exc))
        detail = f"A backing service is unavailable and nothing was done; retry in {seconds} s."
        return problem_response(
            request, p.SERVICE_UNAVAILABLE, detail, headers={"Retry-After": str(seconds)}
        )

    return unavailable


def _http(request: PlainRequest, exc: HTTPException) -> Response[object]:
    if exc.status_code >= 500:
        return _unexpected(request, exc)
    kind = HTTP_PROBLEMS.get(exc.status_code) or p.ProblemType(
        slug=f"http-{exc.status_code}", title=exc.detail, status=exc.status_code, when=exc.detail
    )
    return problem_response(request, kind, exc.detail, headers=exc.headers)


def _unexpected(request: PlainRequest, exc: Exception) -> Response[object]:
    fields = _request_fields(request, exc)
    logger.exception("http.unhandled_error", exc_info=exc, extra=fields)
    detail = f"Unexpected error; quote request id {fields['request_id']} when reporting it."
    return problem_response(request, p.INTERNAL_ERROR, detail)


def _request_fields(request: PlainRequest, exc: Exception) -> dict[str, str]:
    return {
        "request_id": request_id(request.scope),
        "method": request.method,
        "path": request.url.path,
        "error": f"{type(exc).__name__}: {exc}",
    }


def exception_handlers(*, retry_after: timedelta, metrics: ApiMetrics) -> ExceptionHandlersMap:
    """The app's exception handlers: domain errors, Litestar's HTTP errors, anything else."""
    handlers: ExceptionHandlersMap = dict.fromkeys(DOMAIN_PROBLEMS, _domain)
    handlers[ValidationException] = _validation
    handlers[InvalidBody] = _invalid_body
    handlers[NotAuthorizedException] = _unauthorized
    handlers[UserNotFound] = _unauthorized
    handlers[Unavailable] = _unavailable_handler(retry_after, metrics)
    handlers[HTTPException] = _http
    handlers[Exception] = _unexpected
    return handlers
