"""An EmailService fake that records what was sent and can be told to fail or be slow."""

from __future__ import annotations

from typing import Literal

import anyio
from attrs import frozen

from skincare_core.shop.ports import OrderEmail, SalesSummaryEmail

EmailKind = Literal["order_confirmation", "payment_received"]


@frozen
class SentEmail:
    """One e-mail the fake accepted."""

    kind: EmailKind
    to: str
    data: OrderEmail


@frozen
class SentSummary:
    """One daily sales summary the fake accepted."""

    to: str
    data: SalesSummaryEmail


class RecordingEmailService:
    """Keeps every sent order e-mail in `sent` and sales summary in `summaries`.
    `fail_next(n)` makes the next n sends (of any kind) raise."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.sent: list[SentEmail] = []
        self.summaries: list[SentSummary] = []
        self.delay = delay
        self._failures: list[Exception] = []

    def fail_next(self, times: int = 1, error: Exception | None = None) -> None:
        """The next `times` sends raise `error` (a ConnectionError by default)."""
        for _ in range(times):
            self._failures.append(error or ConnectionError("e-mail provider unavailable"))

    def of_kind(self, kind: EmailKind) -> list[SentEmail]:
        """Sent e-mails of one kind."""
        return [mail for mail in self.sent if mail.kind == kind]

    async def send_order_confirmation(self, to: str, data: OrderEmail) -> None:
        """Record an order confirmation."""
        await self._send(SentEmail("order_confirmation", to, data))

    async def send_payment_received(self, to: str, data: OrderEmail) -> None:
        """Record a payment-received e-mail."""
        await self._send(SentEmail("payment_received", to, data))

    async def send_sales_summary(self, to: str, data: SalesSummaryEmail) -> None:
        """Record a daily sales summary."""
        await self._delay_or_fail()
        self.summaries.append(SentSummary(to, data))

    async def _send(self, mail: SentEmail) -> None:
        await self._delay_or_fail()
        self.sent.append(mail)

    async def _delay_or_fail(self) -> None:
        if self.delay:
            await anyio.sleep(self.delay)
        if self._failures:
            raise self._failures.pop(0)
