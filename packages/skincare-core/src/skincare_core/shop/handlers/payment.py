"""The payment handler: apply a stored gateway event to its order, exactly once."""

from __future__ import annotations

import logging

from skincare_core.jobs.errors import InvalidJob
from skincare_core.log_context import bind_fields
from skincare_core.shop.errors import (
    PaymentAmountMismatch,
    PaymentForExpiredOrder,
    PaymentNotFound,
)
from skincare_core.shop.job_types import INVOICE_PDF, PAYMENT_RECEIVED_EMAIL, OrderJob, PaymentJob
from skincare_core.shop.models import OrderStatus, PaymentStatus
from skincare_core.shop.ports import Clock
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

logger = logging.getLogger(__name__)


class PaymentHandler:
    """Marks the payment paid, moves the order only from pending, queues the follow-up jobs.

    Money for an expired order is never applied: PaymentForExpiredOrder sends the job to the
    dead letters, the stored payment untouched, for an operator to refund or reinstate.
    """

    def __init__(self, *, uow: UnitOfWorkFactory, clock: Clock) -> None:
        self._uow = uow
        self._clock = clock

    async def __call__(self, args: PaymentJob) -> None:
        """Handle one job; PaymentNotFound (retried) while the webhook has not committed."""
        event_id = args.event_id
        bind_fields(event_id=event_id)
        async with self._uow() as uow:
            payment = await uow.payments.get(event_id, for_update=True)
            if payment is None:
                raise PaymentNotFound(f"payment event {event_id} not found")
            bind_fields(order_id=payment.order_id)
            if payment.status is PaymentStatus.PAID:
                logger.info("payment.already_applied", extra={"event_id": event_id})
                return
            order = await uow.orders.get(payment.order_id, for_update=True)
            if order is None:
                raise InvalidJob(f"order {payment.order_id} of event {event_id} is gone")
            if order.status is OrderStatus.EXPIRED:
                raise PaymentForExpiredOrder(
                    f"event {event_id} paid {payment.amount_rupiah} for order {order.id}, which "
                    "expired unpaid: refund the payment or reinstate the order"
                )
            if payment.amount_rupiah != order.total_rupiah:
                raise PaymentAmountMismatch(
                    f"event {event_id} paid {payment.amount_rupiah}, order total is "
                    f"{order.total_rupiah}"
                )
            await uow.payments.mark_paid(event_id, self._clock.now())
            fields = {"event_id": event_id, "order_id": order.id, "status": order.status.value}
            if not await uow.orders.mark_paid(order.id):
                logger.warning("payment.order_not_pending", extra=fields)
                return
            await uow.outbox.add(PAYMENT_RECEIVED_EMAIL.job(OrderJob(order.id)))
            await uow.outbox.add(INVOICE_PDF.job(OrderJob(order.id)))
        logger.info("payment.applied", extra=fields)
