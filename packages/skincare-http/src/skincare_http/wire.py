"""The HTTP boundary's wire format: request bodies, the problem body, and the one converter.

Request bodies are these attrs classes: OpenAPI documents them, and `body.py` decodes each
field strictly against its annotation. Every response body leaves through `converter`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, TypeVar, cast

import cattrs
from attrs import frozen
from cattrs.gen import make_dict_unstructure_fn
from litestar import Response
from litestar.params import KwargDefinition
from msgspec import Meta

from skincare_core.shop.models import PaymentEvent

# Ids and counts stay inside PostgreSQL's integer / bigint ranges.
MAX_ID = 2**31 - 1
MAX_QUANTITY = 10_000
MAX_AMOUNT_RUPIAH = 10**15

# No control characters: PostgreSQL text cannot hold NUL, and none belongs in an identifier.
PRINTABLE = r"^[^\x00-\x1f\x7f]+$"

# Each constraint twice: msgspec.Meta validates the body, KwargDefinition documents it in OpenAPI.
# Litestar drops a bound of 0 from the schema, so such a bound goes in as schema_extra.
Id = Annotated[int, Meta(ge=1, le=MAX_ID), KwargDefinition(ge=1, le=MAX_ID)]
T = TypeVar("T")

converter = cattrs.Converter()
converter.register_unstructure_hook(datetime, datetime.isoformat)


@frozen
class CartQuantity:
    """PUT /v1/cart/items/{product_id}: the line's new quantity; 0 removes it."""

    quantity: Annotated[
        int,
        Meta(ge=0, le=MAX_QUANTITY),
        KwargDefinition(le=MAX_QUANTITY, schema_extra={"minimum": 0}),
    ]


@frozen
class PaymentEventBody:
    """The payment gateway's webhook body."""

    event_id: Annotated[
        str,
        Meta(min_length=1, max_length=200, pattern=PRINTABLE),
        KwargDefinition(min_length=1, max_length=200, pattern=PRINTABLE),
    ]
    order_id: Id
    status: Literal["paid"]
    amount_rupiah: Annotated[
        int,
        Meta(gt=0, le=MAX_AMOUNT_RUPIAH),
        KwargDefinition(le=MAX_AMOUNT_RUPIAH, schema_extra={"exclusiveMinimum": 0}),
    ]

    def to_event(self) -> PaymentEvent:
        """The domain event."""
        return PaymentEvent(
            event_id=self.event_id,
            order_id=self.order_id,
            status=self.status,
            amount_rupiah=self.amount_rupiah,
        )


@frozen
class FieldError:
    """One invalid input: which field, where it came from, what is wrong."""

    field: str
    source: str
    message: str


@frozen
class Problem:
    """An RFC 9457 problem details body."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    request_id: str | None = None
    errors: list[FieldError] | None = None


converter.register_unstructure_hook(
    Problem, make_dict_unstructure_fn(Problem, converter, _cattrs_omit_if_default=True)
)


def respond(
    body: T, *, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response[T]:
    """A JSON response whose body is `body` unstructured by the boundary's converter."""
    # Typed as T for OpenAPI; the content is T's unstructured (JSON-ready) form.
    content = cast("T", converter.unstructure(body))
    return Response(content, status_code=status_code, headers=headers)


def unstructure(body: object) -> object:
    """`body` as JSON-ready builtins."""
    return converter.unstructure(body)
