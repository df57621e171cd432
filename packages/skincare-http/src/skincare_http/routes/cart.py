"""The signed-in user's cart."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, get, put
from litestar.params import JSONBody, Parameter

from skincare_http import problems as p
from skincare_http.deps import Shop, UserId, signed_in_router
from skincare_http.views import CartView
from skincare_http.wire import MAX_ID, CartQuantity, respond

ProductId = Annotated[int, Parameter(ge=1, le=MAX_ID, description="The product's id.")]


@get(
    "/cart",
    responses=p.problem_responses(p.UNAUTHORIZED, p.SERVICE_UNAVAILABLE),
    tags=["cart"],
)
async def get_cart(shop: Shop, user_id: UserId) -> Response[CartView]:
    """The signed-in user's cart at current prices."""
    return respond(CartView.of(await shop.cart(user_id)))


@put(
    "/cart/items/{product_id:int}",
    responses=p.problem_responses(
        p.INVALID_REQUEST,
        p.UNAUTHORIZED,
        p.PRODUCT_NOT_FOUND,
        p.PAYLOAD_TOO_LARGE,
        p.SERVICE_UNAVAILABLE,
    ),
    tags=["cart"],
)
async def set_cart_item(
    shop: Shop,
    user_id: UserId,
    product_id: ProductId,
    data: JSONBody[CartQuantity],
) -> Response[CartView]:
    """Set how many of a product the cart holds; 0 removes the line. Answers the new cart."""
    return respond(CartView.of(await shop.set_cart_quantity(user_id, product_id, data.quantity)))


router = signed_in_router("/v1", get_cart, set_cart_item)
