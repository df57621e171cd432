"""Holding an e-mail's send claim while the provider works: renewed, and given back on failure.

The lease is short so that a worker that dies leaves its claims to expire within seconds; a
live run renews its claim every third of the lease for as long as its send takes, each renewal
a short transaction of its own (none stays open across the provider call).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

import anyio
from attrs import frozen

from skincare_core.shop.models import NotificationType, SendClaim
from skincare_core.shop.ports import Clock
from skincare_core.shop.unit_of_work import UnitOfWork, UnitOfWorkFactory

logger = logging.getLogger(__name__)


class ClaimedSend(Protocol):
    """The one send a claim is for: where its claim is renewed and released."""

    @property
    def fields(self) -> Mapping[str, object]:
        """What log lines about it say."""

    async def renew(self, uow: UnitOfWork, token: str, until: datetime) -> bool:
        """Move the claim `token` holds to `until`; False once `token` no longer holds it."""

    async def release(self, uow: UnitOfWork, token: str) -> None:
        """Drop the claim `token` holds."""


@frozen
class OrderSend:
    """An order's notification of one kind."""

    order_id: int
    kind: NotificationType

    @property
    def fields(self) -> Mapping[str, object]:
        """The order and the notification."""
        return {"order_id": self.order_id, "notification": self.kind.value}

    async def renew(self, uow: UnitOfWork, token: str, until: datetime) -> bool:
        """Renew on the notifications table."""
        return await uow.notifications.renew_send(self.order_id, self.kind, token, until)

    async def release(self, uow: UnitOfWork, token: str) -> None:
        """Release on the notifications table."""
        await uow.notifications.release_send(self.order_id, self.kind, token)


@frozen
class ReportSend:
    """A report to the shop, by its key."""

    key: str

    @property
    def fields(self) -> Mapping[str, object]:
        """The report's key."""
        return {"report": self.key}

    async def renew(self, uow: UnitOfWork, token: str, until: datetime) -> bool:
        """Renew on the reports table."""
        return await uow.reports.renew_send(self.key, token, until)

    async def release(self, uow: UnitOfWork, token: str) -> None:
        """Release on the reports table."""
        await uow.reports.release_send(self.key, token)


class SendClaims:
    """Runs sends under claims taken with `lease`."""

    def __init__(self, *, uow: UnitOfWorkFactory, clock: Clock, lease: timedelta) -> None:
        self._uow = uow
        self._clock = clock
        self.lease = lease

    async def hold_while(
        self, target: ClaimedSend, claim: SendClaim, send: Callable[[], Awaitable[None]]
    ) -> None:
        """Await `send`, renewing `claim` meanwhile; a failed send gives the claim back (so the
        retry need not wait out the lease) and re-raises."""
        failed: list[Exception] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._renew_forever, target, claim)
            try:
                await send()
            except Exception as error:
                failed.append(error)
            tg.cancel_scope.cancel()
        if failed:
            await self._release(target, claim)
            raise failed[0]

    async def _renew_forever(self, target: ClaimedSend, claim: SendClaim) -> None:
        while True:
            await anyio.sleep(self.lease.total_seconds() / 3)
            until = self._clock.now() + self.lease
            try:
                async with self._uow() as uow:
                    held = await target.renew(uow, claim.token, until)
            except Exception as error:
                fields = {**target.fields, "error": repr(error)}
                logger.warning("email.claim_not_renewed", extra=fields)
                continue
            if not held:
                # Another delivery took the lapsed claim and may send as well.
                logger.warning("email.claim_lost", extra=dict(target.fields))
                return

    async def _release(self, target: ClaimedSend, claim: SendClaim) -> None:
        try:
            async with self._uow() as uow:
                await target.release(uow, claim.token)
        except Exception as error:
            # The lease runs out by itself; the send's own error is the one to report.
            logger.warning(
                "email.claim_not_released", extra={**target.fields, "error": repr(error)}
            )
