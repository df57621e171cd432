"""The invoice handler: render and store a PDF once per order number."""

from __future__ import annotations

import logging

import anyio

from skincare_core.log_context import bind_fields
from skincare_core.shop.job_types import OrderJob
from skincare_core.shop.models import InvoiceRecord, Order, OrderStatus, User
from skincare_core.shop.ports import Clock, InvoiceData, InvoiceRenderer, InvoiceStore
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

logger = logging.getLogger(__name__)


def invoice_key(order_number: str) -> str:
    """Where an order's invoice is stored."""
    return f"invoices/{order_number}.pdf"


class InvoiceHandler:
    """Idempotent by order number: a stored invoice is never rendered or written again."""

    def __init__(
        self,
        *,
        uow: UnitOfWorkFactory,
        renderer: InvoiceRenderer,
        store: InvoiceStore,
        clock: Clock,
    ) -> None:
        self._uow = uow
        self._renderer = renderer
        self._store = store
        self._clock = clock

    async def __call__(self, args: OrderJob) -> None:
        """Handle one job."""
        order_id = args.order_id
        bind_fields(order_id=order_id)
        found = await self._read(order_id)
        if found is None:
            return
        order, user = found
        key = invoice_key(order.order_number)
        if not await self._store.exists(key):
            data = InvoiceData(
                order.order_number,
                self._clock.now(),
                user.email,
                order.items,
                order.total_rupiah,
                paid=order.status is OrderStatus.PAID,
            )
            pdf = await anyio.to_thread.run_sync(self._renderer.render, data)
            await self._store.put(key, pdf)
        async with self._uow() as uow:
            await uow.invoices.add(InvoiceRecord(order_id, key, self._clock.now()))
        logger.info("invoice.stored", extra={"order_id": order_id, "key": key})

    async def _read(self, order_id: int) -> tuple[Order, User] | None:
        async with self._uow() as uow:
            if await uow.invoices.get(order_id) is not None:
                logger.info("invoice.already_stored", extra={"order_id": order_id})
                return None
            order = await uow.orders.get(order_id)
            user = None if order is None else await uow.users.get(order.user_id)
        if order is None or user is None:
            logger.warning("invoice.order_gone", extra={"order_id": order_id})
            return None
        return order, user
