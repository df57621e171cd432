"""The order e-mail handlers: read and claim the send, send, then record.

A queue may hand one job to two consumers at once (SQS standard queues do), so each run first
claims the send with a lease, in the short transaction that reads the order; a run that finds
a live claim retries when it ends, by which time the holder has recorded the e-mail and the
run acks. No transaction stays open across the provider call (`send_claims.py` renews the
claim while the send lasts and drops it if the send fails). Recording after the send means a
run that dies between the two (or mid-send) sends the e-mail once more when its lease has
expired (at most one duplicate per death) rather than recording an e-mail that never went out.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from functools import partial

from skincare_core.jobs.definitions import current_job
from skincare_core.jobs.errors import RetryLater
from skincare_core.log_context import bind_fields
from skincare_core.shop.errors import AlreadyNotified
from skincare_core.shop.handlers.send_claims import OrderSend, SendClaims
from skincare_core.shop.job_types import OrderJob
from skincare_core.shop.models import NotificationType, Order, SendClaim, User
from skincare_core.shop.ports import Clock, EmailService, OrderEmail
from skincare_core.shop.unit_of_work import UnitOfWork, UnitOfWorkFactory

logger = logging.getLogger(__name__)

SEND_LEASE = timedelta(seconds=15)
"""How long a claim keeps other runs from sending unless renewed: a live run renews it every
5 s while its send lasts, so a dead worker's e-mails go out at most this late. The times come
from each worker's clock, which must agree to well within this (NTP keeps them to milliseconds)."""


class OrderEmailHandler:
    """Sends one kind of order e-mail once per order, even to concurrent deliveries."""

    def __init__(
        self,
        *,
        uow: UnitOfWorkFactory,
        email: EmailService,
        clock: Clock,
        kind: NotificationType,
        lease: timedelta = SEND_LEASE,
    ) -> None:
        self._uow = uow
        self._email = email
        self._clock = clock
        self._kind = kind
        self._claims = SendClaims(uow=uow, clock=clock, lease=lease)

    async def __call__(self, args: OrderJob) -> None:
        """Handle one job; raises on a transient failure (RetryLater while another run sends)."""
        job = current_job()
        order_id = args.order_id
        bind_fields(order_id=order_id)
        claim = SendClaim(uuid.uuid4().hex, self._clock.now() + self._claims.lease)
        found = await self._claim(order_id, claim)
        if found is None:
            return
        order, user = found
        data = OrderEmail(
            order.order_number, order.items, order.total_rupiah, job.id, user.language
        )
        target = OrderSend(order_id, self._kind)
        await self._claims.hold_while(target, claim, partial(self._send, user.email, data))
        await self._record(order_id, job.id)

    async def _claim(self, order_id: int, claim: SendClaim) -> tuple[Order, User] | None:
        """The order and its customer once this run holds the send; None when there is nothing
        to send; RetryLater while another run's claim is live."""
        now = self._clock.now()
        async with self._uow() as uow:
            found = await self._read_and_claim(uow, order_id, claim, now)
        if found is None:
            return None
        order, user, holder = found
        if holder.token != claim.token:
            fields = {"order_id": order_id, "notification": self._kind.value, "until": holder.until}
            logger.info("email.claimed_elsewhere", extra=fields)
            raise RetryLater(max(holder.until - now, timedelta(0)), "another run is sending")
        return order, user

    async def _read_and_claim(
        self, uow: UnitOfWork, order_id: int, claim: SendClaim, now: datetime
    ) -> tuple[Order, User, SendClaim] | None:
        """The order, its customer and the claim holding the send; None if nothing to send."""
        fields = {"order_id": order_id, "notification": self._kind.value}
        if await uow.notifications.is_notified(order_id, self._kind):
            logger.info("email.already_sent", extra=fields)
            return None
        order = await uow.orders.get(order_id)
        user = None if order is None else await uow.users.get(order.user_id)
        if order is None or user is None:
            logger.warning("email.order_gone", extra=fields)
            return None
        holder = await uow.notifications.claim_send(order_id, self._kind, claim, now)
        # None: a concurrent run recorded the send after the check above.
        return None if holder is None else (order, user, holder)

    async def _record(self, order_id: int, job_id: str) -> None:
        try:
            async with self._uow() as uow:
                await uow.notifications.mark_notified(order_id, self._kind, self._clock.now())
        except AlreadyNotified:
            fields = {"job_id": job_id, "order_id": order_id, "notification": self._kind.value}
            logger.info("email.already_recorded", extra=fields)

    async def _send(self, to: str, data: OrderEmail) -> None:
        if self._kind is NotificationType.ORDER_CONFIRMATION:
            await self._email.send_order_confirmation(to, data)
        else:
            await self._email.send_payment_received(to, data)
