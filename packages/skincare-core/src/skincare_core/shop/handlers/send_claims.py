"""Holding an e-mail's send claim while the provider works: renewed, and given back on failure.

The lease is short so that a worker that dies leaves its claims to expire within seconds; a
live run renews its claim every third of the lease for as long as its send takes, each renewal
a short transaction of its own (none stays open across the provider call).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

import anyio

from skincare_core.shop.models import NotificationType, SendClaim
from skincare_core.shop.ports import Clock, UnitOfWorkFactory

logger = logging.getLogger(__name__)


class SendClaims:
    """Runs sends under claims of one notification kind, taken with `lease`."""

    def __init__(
        self, *, uow: UnitOfWorkFactory, clock: Clock, kind: NotificationType, lease: timedelta
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._kind = kind
        self.lease = lease

    async def hold_while(
        self, order_id: int, claim: SendClaim, send: Callable[[], Awaitable[None]]
    ) -> None:
        """Await `send`, renewing `claim` meanwhile; a failed send gives the claim back (so the
        retry need not wait out the lease) and re-raises."""
        failed: list[Exception] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._renew_forever, order_id, claim)
            try:
                await send()
            except Exception as error:
                failed.append(error)
            tg.cancel_scope.cancel()
        if failed:
            await self._release(order_id, claim)
            raise failed[0]

    async def _renew_forever(self, order_id: int, claim: SendClaim) -> None:
        fields = {"order_id": order_id, "notification": self._kind.value}
        while True:
            await anyio.sleep(self.lease.total_seconds() / 3)
            until = self._clock.now() + self.lease
            try:
                async with self._uow() as uow:
                    held = await uow.notifications.renew_send(
                        order_id, self._kind, claim.token, until
                    )
            except Exception as error:
                logger.warning("email.claim_not_renewed", extra={**fields, "error": repr(error)})
                continue
            if not held:
                # Another delivery took the lapsed claim and may send as well.
                logger.warning("email.claim_lost", extra=fields)
                return

    async def _release(self, order_id: int, claim: SendClaim) -> None:
        try:
            async with self._uow() as uow:
                await uow.notifications.release_send(order_id, self._kind, claim.token)
        except Exception as error:
            # The lease runs out by itself; the send's own error is the one to report.
            logger.warning(
                "email.claim_not_released", extra={"order_id": order_id, "error": repr(error)}
            )
