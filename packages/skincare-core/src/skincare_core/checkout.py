"""Checkout: the cart becomes an order, stock goes down, the confirmation job goes in the outbox."""

from __future__ import annotations

import logging
import secrets

from skincare_core.errors import CartEmpty, DuplicateIdempotencyKey, OutOfStock
from skincare_core.jobs import SEND_CONFIRMATION_EMAIL, new_job
from skincare_core.models import CartLine, NewOrder, Order, OrderItem
from skincare_core.outbound import Clock
from skincare_core.persistence import UnitOfWork, UnitOfWorkFactory

logger = logging.getLogger(__name__)


class CheckoutService:
    """Places orders idempotently per (user, idempotency key), all in one transaction."""

    def __init__(self, *, uow: UnitOfWorkFactory, clock: Clock) -> None:
        self._uow = uow
        self._clock = clock

    async def checkout(self, user_id: int, idempotency_key: str) -> Order:
        """The order for this key: placed now, or the one placed earlier with the same key."""
        try:
            return await self._place(user_id, idempotency_key)
        except DuplicateIdempotencyKey:
            # A concurrent request with the same key committed first: answer with its order.
            async with self._uow() as uow:
                order = await uow.orders.find_by_idempotency_key(user_id, idempotency_key)
            if order is None:
                raise
            return order

    async def _place(self, user_id: int, key: str) -> Order:
        async with self._uow() as uow:
            lines = await uow.carts.lines(user_id, lock_products=True)
            # Looked up under the product locks, so a same-key request that held them has
            # committed; a repeat after success finds its order whatever the cart holds now.
            existing = await uow.orders.find_by_idempotency_key(user_id, key)
            if existing is not None:
                return existing
            order = await uow.orders.add(self._new_order(user_id, key, lines))
            await self._take_stock(uow, user_id, lines)
            await uow.outbox.add(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id)))
        logger.info("order.placed", extra={"order_id": order.id, "user_id": user_id})
        return order

    def _new_order(self, user_id: int, key: str, lines: list[CartLine]) -> NewOrder:
        if not lines:
            raise CartEmpty()
        for line in lines:
            if line.quantity > line.product.stock:
                raise OutOfStock(line.product.id, line.quantity, line.product.stock)
        now = self._clock.now()
        items = tuple(
            OrderItem(line.product.id, line.product.name, line.quantity, line.product.price_rupiah)
            for line in lines
        )
        number = f"SKN-{now:%Y%m%d}-{secrets.token_hex(4).upper()}"
        return NewOrder(user_id, key, number, items, now)

    @staticmethod
    async def _take_stock(uow: UnitOfWork, user_id: int, lines: list[CartLine]) -> None:
        for line in lines:
            await uow.products.decrement_stock(line.product.id, line.quantity)
        await uow.carts.clear(user_id)
