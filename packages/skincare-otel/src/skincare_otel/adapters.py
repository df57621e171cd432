"""Child spans around the slow calls a job makes: the e-mail send and the PDF render."""

from __future__ import annotations

from contextlib import AbstractContextManager

from opentelemetry.trace import Span, SpanKind, Tracer

from skincare_core.shop.ports import (
    EmailService,
    InvoiceData,
    InvoiceRenderer,
    OrderEmail,
    SalesSummaryEmail,
)


class TracedEmailService:
    """An EmailService whose every send is a client span (`email.send`)."""

    def __init__(self, inner: EmailService, tracer: Tracer) -> None:
        self._inner = inner
        self._tracer = tracer

    async def send_order_confirmation(self, to: str, data: OrderEmail) -> None:
        """The order-placed e-mail, in its span."""
        with self._span("order_confirmation", data):
            await self._inner.send_order_confirmation(to, data)

    async def send_payment_received(self, to: str, data: OrderEmail) -> None:
        """The payment-received e-mail, in its span."""
        with self._span("payment_received", data):
            await self._inner.send_payment_received(to, data)

    async def send_sales_summary(self, to: str, data: SalesSummaryEmail) -> None:
        """The daily sales summary, in its span."""
        attributes = {"skincare.email.kind": "sales_summary"}
        with self._tracer.start_as_current_span(
            "email.send", kind=SpanKind.CLIENT, attributes=attributes
        ):
            await self._inner.send_sales_summary(to, data)

    def _span(self, kind: str, data: OrderEmail) -> AbstractContextManager[Span]:
        attributes = {"skincare.email.kind": kind, "skincare.order.number": data.order_number}
        return self._tracer.start_as_current_span(
            "email.send", kind=SpanKind.CLIENT, attributes=attributes
        )


class TracedInvoiceRenderer:
    """An InvoiceRenderer whose every render is a span (`invoice.render`)."""

    def __init__(self, inner: InvoiceRenderer, tracer: Tracer) -> None:
        self._inner = inner
        self._tracer = tracer

    def render(self, invoice: InvoiceData) -> bytes:
        """The PDF bytes, rendered in the span (in the caller's thread: the context follows)."""
        attributes = {"skincare.order.number": invoice.order_number}
        with self._tracer.start_as_current_span("invoice.render", attributes=attributes):
            return self._inner.render(invoice)
