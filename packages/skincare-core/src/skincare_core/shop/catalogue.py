"""Read and cart services the HTTP API calls: catalogue, carts, a user's orders."""

from __future__ import annotations

from skincare_core.shop.errors import OrderNotFound, ProductNotFound, UserNotFound
from skincare_core.shop.models import CartLine, Order, Product
from skincare_core.shop.unit_of_work import UnitOfWorkFactory


class ShopService:
    """Products, the signed-in user's cart, and their orders (another user's order is not found)."""

    def __init__(self, *, uow: UnitOfWorkFactory) -> None:
        self._uow = uow

    async def products(self) -> list[Product]:
        """Every product with price and stock."""
        async with self._uow() as uow:
            return await uow.products.list()

    async def cart(self, user_id: int) -> list[CartLine]:
        """The user's cart."""
        async with self._uow() as uow:
            return await uow.carts.lines(user_id)

    async def set_cart_quantity(
        self, user_id: int, product_id: int, quantity: int
    ) -> list[CartLine]:
        """Set a cart line (0 removes it) and answer the cart; UserNotFound, ProductNotFound."""
        if quantity < 0:
            raise ValueError("quantity must be >= 0")
        # One transaction for the change and the cart it answers: the API's hot path.
        async with self._uow() as uow:
            # A cart belongs to a user who exists (in PostgreSQL, a foreign key).
            if await uow.users.get(user_id) is None:
                raise UserNotFound(user_id)
            if await uow.products.get(product_id) is None:
                raise ProductNotFound(product_id)
            await uow.carts.set_quantity(user_id, product_id, quantity)
            return await uow.carts.lines(user_id)

    async def order(self, user_id: int, order_id: int) -> Order:
        """The user's own order; OrderNotFound for a missing or someone else's order."""
        async with self._uow() as uow:
            order = await uow.orders.get(order_id)
        if order is None or order.user_id != user_id:
            raise OrderNotFound(order_id)
        return order
