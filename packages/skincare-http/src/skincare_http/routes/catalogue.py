"""GET /v1/products."""

from __future__ import annotations

from litestar import Response, get

from skincare_http import problems as p
from skincare_http.deps import Shop, signed_in_router
from skincare_http.views import ProductList, ProductView
from skincare_http.wire import respond


@get(
    "/products",
    responses=p.problem_responses(p.UNAUTHORIZED, p.SERVICE_UNAVAILABLE),
    tags=["catalogue"],
)
async def list_products(shop: Shop) -> Response[ProductList]:
    """Every product with its price (rupiah) and stock."""
    products = [ProductView.of(product) for product in await shop.products()]
    return respond(ProductList(products=products))


router = signed_in_router("/v1", list_products)
