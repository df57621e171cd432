"""Checkout: the cart becomes an order, stock goes down, and the outbox gets the confirmation
e-mail and the order's expiry at the end of its payment window."""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from skincare_core.shop.errors import CartEmpty, DuplicateIdempotencyKey, OutOfStock
from skincare_core.shop.job_types import CONFIRMATION_EMAIL, ORDER_EXPIRY, OrderJob
from skincare_core.shop.models import CartLine, NewOrder, Order, OrderItem
from skincare_core.shop.ports import Clock
from skincare_core.shop.unit_of_work import UnitOfWork, UnitOfWorkFactory

logger = logging.getLogger(__name__)

DEFAULT_PAYMENT_WINDOW = timedelta(hours=24)
"""How long an order waits for its payment before it expires and its stock goes back."""


class CheckoutService:
    """Places orders idempotently per (user, idempotency key), all in one transaction."""

    def __init__(
        self,
        *,
        uow: UnitOfWorkFactory,
        clock: Clock,
        payment_window: timedelta = DEFAULT_PAYMENT_WINDOW,
    ) -> None:
        if payment_window <= timedelta(0):
            raise ValueError(f"the payment window must be positive, got {payment_window}")
        self._uow = uow
        self._clock = clock
        self._window = payment_window

    async def checkout(self, user_id: int, idempotency_key: str) -> Order:
        """The order for this key: placed now, or the one placed earlier with the same key."""
        try:
            return await self._place(user_id, idempotency_key)
        except DuplicateIdempotencyKey:
            # The key was used before (or by a concurrent request that committed first): the
            # failed insert rolled this attempt back, so answer the first order, unchanged.
            order = await self._existing(user_id, idempotency_key)
            if order is None:
                raise
            return order

    async def _place(self, user_id: int, key: str) -> Order:
        # The happy path never looks the key up: the unique (user, key) insert is the check.
        async with self._uow() as uow:
            lines = await uow.carts.lines(user_id, lock_products=True)
            try:
                new_order = self._new_order(user_id, key, lines)
            except (CartEmpty, OutOfStock):
                # A repeat after success finds an emptied (or changed) cart: its order stands.
                if existing := await uow.orders.find_by_idempotency_key(user_id, key):
                    return existing
                raise
            order = await uow.orders.add(new_order)
            await uow.carts.check_out(user_id, lines)
            await self._add_jobs(uow, order.id)
        logger.info("order.placed", extra={"order_id": order.id, "user_id": user_id})
        return order

    async def _add_jobs(self, uow: UnitOfWork, order_id: int) -> None:
        await uow.outbox.add(CONFIRMATION_EMAIL.job(OrderJob(order_id)))
        await uow.outbox.add(ORDER_EXPIRY.job(OrderJob(order_id), delay=self._window))

    async def _existing(self, user_id: int, key: str) -> Order | None:
        async with self._uow() as uow:
            return await uow.orders.find_by_idempotency_key(user_id, key)

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
