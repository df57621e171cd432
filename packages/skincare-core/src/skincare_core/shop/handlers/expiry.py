"""The order expiry handler: an order still unpaid when its payment window closes expires."""

from __future__ import annotations

import logging

from skincare_core.log_context import bind_fields
from skincare_core.shop.job_types import OrderJob
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

logger = logging.getLogger(__name__)


class OrderExpiryHandler:
    """`pending -> expired` and the stock back, in one transaction; any other order is left alone.

    The order row is locked first, as the payment handler locks it: a payment applied a moment
    earlier wins (the order is paid, nothing expires), one applied later finds it expired.
    """

    def __init__(self, *, uow: UnitOfWorkFactory) -> None:
        self._uow = uow

    async def __call__(self, args: OrderJob) -> None:
        """Handle one job."""
        order_id = args.order_id
        bind_fields(order_id=order_id)
        async with self._uow() as uow:
            order = await uow.orders.get(order_id, for_update=True)
            if order is None:
                logger.warning("order.expiry_order_gone", extra={"order_id": order_id})
                return
            fields = {"order_id": order_id, "status": order.status.value}
            if not await uow.orders.mark_expired(order_id):
                logger.info("order.not_expired", extra=fields)
                return
            await uow.products.put_back(order.items)
        logger.info("order.expired", extra=fields)
