"""The problem types (RFC 9457) the API answers with, and how OpenAPI documents them.

Each type URI is stable: clients switch on `type`, never on `title` or `detail`.
"""

from __future__ import annotations

from attrs import frozen
from litestar.openapi.datastructures import ResponseSpec

from skincare_http.wire import Problem

PROBLEM_BASE = "https://skincare.example/problems"
PROBLEM_MEDIA_TYPE = "application/problem+json"


@frozen
class ProblemType:
    """One kind of error: its URI slug, title, HTTP status and when it happens."""

    slug: str
    title: str
    status: int
    when: str

    @property
    def uri(self) -> str:
        """The stable `type` URI."""
        return f"{PROBLEM_BASE}/{self.slug}"


INVALID_REQUEST = ProblemType(
    slug="invalid-request",
    title="Invalid request",
    status=400,
    when="A header, path parameter or body field is missing or invalid; `errors` names each field.",
)
UNAUTHORIZED = ProblemType(
    slug="unauthorized",
    title="Not signed in",
    status=401,
    when="The Bearer token is missing, malformed, expired, from another issuer, or its user "
    "does not exist.",
)
INVALID_SIGNATURE = ProblemType(
    slug="invalid-signature",
    title="Invalid webhook signature",
    status=401,
    when="X-Timestamp or X-Signature is missing, wrong, or the timestamp is outside the tolerance.",
)
NOT_FOUND = ProblemType(slug="not-found", title="Not found", status=404, when="No such path.")
PRODUCT_NOT_FOUND = ProblemType(
    slug="product-not-found", title="Product not found", status=404, when="No such product."
)
ORDER_NOT_FOUND = ProblemType(
    slug="order-not-found",
    title="Order not found",
    status=404,
    when="No such order for this user (another user's order is not found too), or a payment "
    "event names an order that does not exist.",
)
METHOD_NOT_ALLOWED = ProblemType(
    slug="method-not-allowed",
    title="Method not allowed",
    status=405,
    when="The path does not accept this method.",
)
CART_EMPTY = ProblemType(
    slug="cart-empty", title="Cart is empty", status=409, when="Checkout of an empty cart."
)
OUT_OF_STOCK = ProblemType(
    slug="out-of-stock",
    title="Out of stock",
    status=409,
    when="A cart line asks for more than the product's stock.",
)
PAYLOAD_TOO_LARGE = ProblemType(
    slug="payload-too-large",
    title="Request body too large",
    status=413,
    when="The body is over the size limit.",
)
INVALID_PAYMENT_EVENT = ProblemType(
    slug="invalid-payment-event",
    title="Invalid payment event",
    status=422,
    when="A signed event that cannot be a real payment.",
)
HEADERS_TOO_LARGE = ProblemType(
    slug="headers-too-large",
    title="Request headers too large",
    status=431,
    when="The request's headers together are over the size limit.",
)
INTERNAL_ERROR = ProblemType(
    slug="internal-error",
    title="Internal error",
    status=500,
    when="An unexpected error; `request_id` (also the X-Request-ID header) identifies it in the "
    "logs.",
)
NOT_READY = ProblemType(
    slug="not-ready",
    title="Not ready",
    status=503,
    when="A dependency (the database) is unreachable.",
)
SERVICE_UNAVAILABLE = ProblemType(
    slug="service-unavailable",
    title="Service unavailable",
    status=503,
    when="The database (or another backing service) is unreachable; nothing was done. Retry "
    "after the Retry-After header's seconds, with the same Idempotency-Key for a checkout.",
)

ALL_PROBLEM_TYPES = (
    INVALID_REQUEST,
    UNAUTHORIZED,
    INVALID_SIGNATURE,
    NOT_FOUND,
    PRODUCT_NOT_FOUND,
    ORDER_NOT_FOUND,
    METHOD_NOT_ALLOWED,
    CART_EMPTY,
    OUT_OF_STOCK,
    PAYLOAD_TOO_LARGE,
    INVALID_PAYMENT_EVENT,
    HEADERS_TOO_LARGE,
    INTERNAL_ERROR,
    NOT_READY,
    SERVICE_UNAVAILABLE,
)
# Any route can answer these: the header cap holds before sign-in and every handler.
EVERY_ROUTE = (HEADERS_TOO_LARGE, INTERNAL_ERROR)


def problem_responses(*types: ProblemType) -> dict[int, ResponseSpec]:
    """OpenAPI responses for these problem types, plus those every route can give."""
    by_status: dict[int, list[ProblemType]] = {}
    for problem in (*types, *EVERY_ROUTE):
        by_status.setdefault(problem.status, []).append(problem)
    return {
        status: ResponseSpec(
            data_container=Problem,
            generate_examples=False,
            media_type=PROBLEM_MEDIA_TYPE,
            description="; ".join(f"`{p.uri}`: {p.when}" for p in problems),
        )
        for status, problems in by_status.items()
    }


def catalogue_markdown() -> str:
    """The problem type catalogue, for the OpenAPI description."""
    rows = "\n".join(
        f"| `{p.uri}` | {p.status} | {p.title} | {p.when} |" for p in ALL_PROBLEM_TYPES
    )
    return (
        "Errors are RFC 9457 `application/problem+json` bodies; switch on `type`.\n\n"
        "| type | status | title | when |\n| --- | --- | --- | --- |\n" + rows
    )
