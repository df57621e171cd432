"""Payment webhook intake: store the event once, queue its processing in the same transaction."""

from __future__ import annotations

import logging

from skincare_core.shop.errors import OrderNotFound
from skincare_core.shop.job_types import PAYMENT_JOB, PaymentJob
from skincare_core.shop.models import PaymentEvent
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

logger = logging.getLogger(__name__)


class InvalidPaymentEvent(ValueError):
    """A webhook event that cannot be a real payment (non-positive amount, unknown status)."""


class PaymentWebhookService:
    """Receives gateway events; a duplicate event id gets the same answer and no second job."""

    def __init__(self, *, uow: UnitOfWorkFactory) -> None:
        self._uow = uow

    async def receive(self, event: PaymentEvent) -> bool:
        """Store the event and queue `process_payment`; True if new, False for a duplicate."""
        # Blank like the payment handler sees it: a whitespace-only id could never be applied.
        if event.amount_rupiah <= 0 or event.status != "paid" or not event.event_id.strip():
            raise InvalidPaymentEvent("event must be paid, with an event id and a positive amount")
        async with self._uow() as uow:
            if await uow.orders.get(event.order_id) is None:
                raise OrderNotFound(event.order_id)
            is_new = await uow.payments.add_event(event)
            if is_new:
                await uow.outbox.add(PAYMENT_JOB.job(PaymentJob(event.event_id)))
        logger.info("payment.received", extra={"event_id": event.event_id, "duplicate": not is_new})
        return is_new
