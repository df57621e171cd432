"""The in-memory sales query and reports table (what `skincare_postgres.reports` does in SQL)."""

from __future__ import annotations

from datetime import datetime

from skincare_core.shop.models import DailySales, Order, OrderStatus, ProductSales, SendClaim
from skincare_core.shop.sales import SalesDay
from skincare_core.testing.shop.memory_state import Transaction


class Sales:
    """Paid orders, by the day their first payment was applied (`skincare_core.shop.sales`)."""

    def __init__(self, uow: Transaction) -> None:
        self._s = uow.state

    async def of_day(self, day: SalesDay, *, top: int) -> DailySales:
        """The day's paid orders, their revenue and the `top` products by quantity."""
        sold = [o for o in self._paid_orders() if day.start <= self._paid_at(o) < day.end]
        return DailySales(
            day.day, len(sold), sum(o.total_rupiah for o in sold), _top_products(sold, top)
        )

    def _paid_orders(self) -> list[Order]:
        return [o for o in self._s.orders.values() if o.status is OrderStatus.PAID]

    def _paid_at(self, order: Order) -> datetime:
        # A paid order got there through a payment applied in the same transaction.
        return min(
            p.paid_at
            for p in self._s.payments.values()
            if p.order_id == order.id and p.paid_at is not None
        )


def _top_products(orders: list[Order], top: int) -> tuple[ProductSales, ...]:
    totals: dict[int, ProductSales] = {}
    for order in sorted(orders, key=lambda o: o.id):
        for item in order.items:
            seen = totals.get(item.product_id, ProductSales(item.product_id, item.name, 0, 0))
            # The latest order's name wins, as in the SQL.
            totals[item.product_id] = ProductSales(
                item.product_id,
                item.name,
                seen.quantity + item.quantity,
                seen.revenue_rupiah + item.line_total_rupiah,
            )
    ranked = sorted(totals.values(), key=lambda p: (-p.quantity, p.product_id))
    return tuple(ranked[:top])


class Reports:
    """Reports sent by key, and at most one live send claim on each."""

    def __init__(self, uow: Transaction) -> None:
        self._uow = uow
        self._s = uow.state

    async def claim_send(self, key: str, claim: SendClaim, now: datetime) -> SendClaim | None:
        """Take the send unless it was sent (None) or a claim live at `now` holds it (that one)."""
        self._uow.fault("reports.claim_send")
        if key in self._s.reports_sent:
            return None
        held = self._s.report_claims.get(key)
        if held is not None and held.until > now:
            return held
        self._s.report_claims[key] = claim
        return claim

    async def renew_send(self, key: str, token: str, until: datetime) -> bool:
        """Move the claim to `until` if `token` still holds it (unsent)."""
        held = self._s.report_claims.get(key)
        if held is None or held.token != token:
            return False
        self._s.report_claims[key] = SendClaim(token, until)
        return True

    async def release_send(self, key: str, token: str) -> None:
        """Drop the claim if `token` still holds it."""
        held = self._s.report_claims.get(key)
        if held is not None and held.token == token:
            del self._s.report_claims[key]

    async def mark_sent(self, key: str, sent_at: datetime) -> bool:
        """Record it (ending any claim); False if it already was."""
        self._uow.fault("reports.mark_sent")
        if key in self._s.reports_sent:
            return False
        self._s.reports_sent[key] = sent_at
        self._s.report_claims.pop(key, None)
        return True
