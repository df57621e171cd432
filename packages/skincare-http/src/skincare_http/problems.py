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
    "invalid-request", "Invalid request", 400,
    "A header, path parameter or body field is missing or invalid; `errors` names each field.",
)  # fmt: skip
UNAUTHORIZED = ProblemType(
    "unauthorized", "Not signed in", 401,
    "The Bearer token is missing, malformed, expired or from another issuer.",
)  # fmt: skip
INVALID_SIGNATURE = ProblemType(
    "invalid-signature", "Invalid webhook signature", 401,
    "X-Timestamp or X-Signature is missing, wrong, or the timestamp is outside the tolerance.",
)  # fmt: skip
NOT_FOUND = ProblemType("not-found", "Not found", 404, "No such path.")
PRODUCT_NOT_FOUND = ProblemType("product-not-found", "Product not found", 404, "No such product.")
ORDER_NOT_FOUND = ProblemType(
    "order-not-found", "Order not found", 404,
    "No such order for this user (another user's order is not found too), or a payment event "
    "names an order that does not exist.",
)  # fmt: skip
METHOD_NOT_ALLOWED = ProblemType(
    "method-not-allowed", "Method not allowed", 405, "The path does not accept this method."
)
CART_EMPTY = ProblemType("cart-empty", "Cart is empty", 409, "Checkout of an empty cart.")
OUT_OF_STOCK = ProblemType(
    "out-of-stock", "Out of stock", 409, "A cart line asks for more than the product's stock."
)
PAYLOAD_TOO_LARGE = ProblemType(
    "payload-too-large", "Request body too large", 413, "The body is over the size limit."
)
INVALID_PAYMENT_EVENT = ProblemType(
    "invalid-payment-event", "Invalid payment event", 422,
    "A signed event that cannot be a real payment.",
)  # fmt: skip
INTERNAL_ERROR = ProblemType(
    "internal-error", "Internal error", 500,
    "An unexpected error; `request_id` (also the X-Request-ID header) identifies it in the logs.",
)  # fmt: skip
NOT_READY = ProblemType(
    "not-ready", "Not ready", 503, "A dependency (the database) is unreachable."
)

ALL_PROBLEM_TYPES = (
    INVALID_REQUEST, UNAUTHORIZED, INVALID_SIGNATURE, NOT_FOUND, PRODUCT_NOT_FOUND,
    ORDER_NOT_FOUND, METHOD_NOT_ALLOWED, CART_EMPTY, OUT_OF_STOCK, PAYLOAD_TOO_LARGE,
    INVALID_PAYMENT_EVENT, INTERNAL_ERROR, NOT_READY,
)  # fmt: skip


def problem_responses(*types: ProblemType) -> dict[int, ResponseSpec]:
    """OpenAPI responses for these problem types (plus the 500 every route can give)."""
    by_status: dict[int, list[ProblemType]] = {}
    for problem in (*types, INTERNAL_ERROR):
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
