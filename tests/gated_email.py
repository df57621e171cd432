"""An e-mail provider whose sends the test holds and lets through, shared by the claim tests on
every adapter."""

from __future__ import annotations

import anyio

from skincare_core.shop.ports import OrderEmail
from skincare_core.testing.shop import RecordingEmailService


class GatedEmail(RecordingEmailService):
    """A provider whose sends hang until the test lets them through (never, if it does not)."""

    def __init__(self) -> None:
        super().__init__()
        self.sending = anyio.Event()
        self.release = anyio.Event()

    async def send_order_confirmation(self, to: str, data: OrderEmail) -> None:
        """Signal `sending`, wait for `release`, then record the send."""
        self.sending.set()
        await self.release.wait()
        await super().send_order_confirmation(to, data)
