"""The order e-mail handlers: read, send, then record.

Recording after the send means a crash between the two sends the e-mail again (at most one
duplicate) rather than recording an e-mail that never went out."""

from __future__ import annotations

import logging

from skincare_core.jobs.job import Job
from skincare_core.shop.errors import AlreadyNotified
from skincare_core.shop.handlers.payloads import order_id_of
from skincare_core.shop.models import NotificationType, Order, User
from skincare_core.shop.ports import Clock, EmailService, OrderEmail, UnitOfWorkFactory

logger = logging.getLogger(__name__)


class OrderEmailHandler:
    """Sends one kind of order e-mail once per order (twice only on a crash after sending)."""

    def __init__(
        self, *, uow: UnitOfWorkFactory, email: EmailService, clock: Clock, kind: NotificationType
    ) -> None:
        self._uow = uow
        self._email = email
        self._clock = clock
        self._kind = kind

    async def __call__(self, job: Job) -> None:
        """Handle one job; raises on a transient failure so the worker retries."""
        order_id = order_id_of(job)
        fields = {"job_id": job.id, "order_id": order_id, "notification": self._kind.value}
        found = await self._read(order_id)
        if found is None:
            return
        order, user = found
        data = OrderEmail(
            order.order_number, order.items, order.total_rupiah, job.id, user.language
        )
        await self._send(user.email, data)
        try:
            async with self._uow() as uow:
                await uow.notifications.mark_notified(order_id, self._kind, self._clock.now())
        except AlreadyNotified:
            logger.info("email.already_recorded", extra=fields)

    async def _read(self, order_id: int) -> tuple[Order, User] | None:
        fields = {"order_id": order_id, "notification": self._kind.value}
        async with self._uow() as uow:
            if await uow.notifications.is_notified(order_id, self._kind):
                logger.info("email.already_sent", extra=fields)
                return None
            order = await uow.orders.get(order_id)
            user = None if order is None else await uow.users.get(order.user_id)
        if order is None or user is None:
            logger.warning("email.order_gone", extra=fields)
            return None
        return order, user

    async def _send(self, to: str, data: OrderEmail) -> None:
        if self._kind is NotificationType.ORDER_CONFIRMATION:
            await self._email.send_order_confirmation(to, data)
        else:
            await self._email.send_payment_received(to, data)
