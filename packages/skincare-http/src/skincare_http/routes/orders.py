"""Checkout and the signed-in user's orders."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.params import HeaderParameter, Parameter

from skincare_http import problems as p
from skincare_http.deps import Checkout, Shop, UserId, signed_in_router
from skincare_http.views import OrderPlaced, OrderView
from skincare_http.wire import MAX_ID, PRINTABLE, respond

IdempotencyKey = Annotated[
    str,
    HeaderParameter(
        name="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=PRINTABLE,
        description="Client-chosen key: the same key again answers the same order.",
    ),
]
OrderId = Annotated[int, Parameter(ge=1, le=MAX_ID, description="The order's id.")]
LOCATION = ResponseHeader(
    name="Location", description="/v1/orders/{order_id}", documentation_only=True, required=True
)


@post(
    "/orders",
    status_code=201,
    response_headers=[LOCATION],
    responses=p.problem_responses(
        p.INVALID_REQUEST, p.UNAUTHORIZED, p.CART_EMPTY, p.OUT_OF_STOCK, p.SERVICE_UNAVAILABLE
    ),
    tags=["orders"],
)
async def place_order(
    checkout: Checkout,
    user_id: UserId,
    idempotency_key: IdempotencyKey,
) -> Response[OrderPlaced]:
    """Check out the cart; the same Idempotency-Key answers the first order, unchanged."""
    order = await checkout.checkout(user_id, idempotency_key)
    location = {"Location": f"/v1/orders/{order.id}"}
    return respond(OrderPlaced.of(order), status_code=201, headers=location)


@get(
    "/orders/{order_id:int}",
    responses=p.problem_responses(
        p.INVALID_REQUEST, p.UNAUTHORIZED, p.ORDER_NOT_FOUND, p.SERVICE_UNAVAILABLE
    ),
    tags=["orders"],
)
async def get_order(shop: Shop, user_id: UserId, order_id: OrderId) -> Response[OrderView]:
    """The signed-in user's order with its items; anyone else's order is 404."""
    return respond(OrderView.of(await shop.order(user_id, order_id)))


router = signed_in_router("/v1", place_order, get_order)
