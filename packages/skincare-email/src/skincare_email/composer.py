"""The part every e-mail adapter shares: turning a port call into a rendered message."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from email.message import EmailMessage

from skincare_core.shop.models import NotificationType
from skincare_core.shop.ports import OrderEmail, SalesSummaryEmail
from skincare_email.messages import render_email
from skincare_email.summary import SALES_SUMMARY, render_sales_summary

logger = logging.getLogger(__name__)


class RenderingEmailService(ABC):
    """An EmailService that renders the shop's messages and hands them to `deliver`."""

    def __init__(self, *, sender: str, shop_name: str = "Skincare") -> None:
        self.sender = sender
        self.shop_name = shop_name

    async def send_order_confirmation(self, to: str, data: OrderEmail) -> None:
        """Render and deliver the order-placed e-mail."""
        await self._send(NotificationType.ORDER_CONFIRMATION, to, data)

    async def send_payment_received(self, to: str, data: OrderEmail) -> None:
        """Render and deliver the payment-received e-mail."""
        await self._send(NotificationType.PAYMENT_RECEIVED, to, data)

    async def send_sales_summary(self, to: str, data: SalesSummaryEmail) -> None:
        """Render and deliver the daily sales summary."""
        message = render_sales_summary(
            data, to=to, sender=self.sender, sent_at=datetime.now(UTC), shop_name=self.shop_name
        )
        await self.deliver(message)
        fields = {"report": data.sales.day.isoformat(), "message_id": message["Message-ID"]}
        logger.info(
            "email.sent",
            extra={**fields, "kind": SALES_SUMMARY, "transport": type(self).__name__},
        )

    @abstractmethod
    async def deliver(self, message: EmailMessage) -> None:
        """Hand one rendered message to the transport; raise the package's errors on failure."""

    async def _send(self, kind: NotificationType, to: str, data: OrderEmail) -> None:
        message = render_email(
            kind,
            data,
            to=to,
            sender=self.sender,
            sent_at=datetime.now(UTC),
            shop_name=self.shop_name,
        )
        await self.deliver(message)
        logger.info(
            "email.sent",
            extra={
                "kind": kind.value,
                "order_number": data.order_number,
                "message_id": message["Message-ID"],
                "transport": type(self).__name__,
            },
        )
