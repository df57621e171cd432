"""The in-memory notifications table: e-mails recorded as sent, and live claims to send them."""

from __future__ import annotations

from datetime import datetime

from skincare_core.shop.errors import AlreadyNotified
from skincare_core.shop.models import NotificationType, SendClaim
from skincare_core.testing.shop.memory_state import Transaction


class Notifications:
    """One notification per (order, type), and at most one live send claim on each."""

    def __init__(self, uow: Transaction) -> None:
        self._uow = uow
        self._s = uow.state

    async def is_notified(self, order_id: int, kind: NotificationType) -> bool:
        """Whether it was recorded."""
        return (order_id, kind) in self._s.notifications

    async def claim_send(
        self, order_id: int, kind: NotificationType, claim: SendClaim, now: datetime
    ) -> SendClaim | None:
        """Take the send unless it was sent (None) or a claim live at `now` holds it (that one)."""
        self._uow.fault("claim_send")
        if (order_id, kind) in self._s.notifications:
            return None
        held = self._s.send_claims.get((order_id, kind))
        if held is not None and held.until > now:
            return held
        self._s.send_claims[(order_id, kind)] = claim
        return claim

    async def renew_send(
        self, order_id: int, kind: NotificationType, token: str, until: datetime
    ) -> bool:
        """Move the claim to `until` if `token` still holds it (unsent)."""
        self._uow.fault("renew_send")
        held = self._s.send_claims.get((order_id, kind))
        if held is None or held.token != token:
            return False
        self._s.send_claims[(order_id, kind)] = SendClaim(token, until)
        return True

    async def release_send(self, order_id: int, kind: NotificationType, token: str) -> None:
        """Drop the claim if `token` still holds it."""
        self._uow.fault("release_send")
        held = self._s.send_claims.get((order_id, kind))
        if held is not None and held.token == token:
            del self._s.send_claims[(order_id, kind)]

    async def mark_notified(self, order_id: int, kind: NotificationType, sent_at: datetime) -> None:
        """Record it (ending any claim); AlreadyNotified on a duplicate."""
        self._uow.fault("mark_notified")
        if (order_id, kind) in self._s.notifications:
            raise AlreadyNotified(f"order {order_id} already got {kind.value}")
        self._s.notifications[(order_id, kind)] = sent_at
        self._s.send_claims.pop((order_id, kind), None)
