"""The day's sales in one query, and the reports e-mailed to the shop (with their send claims),
on one unit of work's connection. Which orders are sales: see `skincare_core.shop.sales`."""

from __future__ import annotations

from datetime import datetime

from psycopg.rows import dict_row, kwargs_row

from skincare_core.shop.models import DailySales, OrderStatus, ProductSales, SendClaim
from skincare_core.shop.sales import SalesDay
from skincare_postgres.driver import Driver

# An order is sold on the day of its first applied payment: a payment in the day with no
# earlier one of its order (ties kept once by DISTINCT). ix_payments_paid_at finds the day's.
_SALES_OF_DAY = (
    "WITH sold AS ("
    " SELECT DISTINCT o.id, o.total_rupiah FROM payments p JOIN orders o ON o.id = p.order_id"
    " WHERE p.paid_at >= %(start)s AND p.paid_at < %(end)s AND o.status = %(paid)s"
    " AND NOT EXISTS (SELECT 1 FROM payments e"
    " WHERE e.order_id = p.order_id AND e.paid_at < p.paid_at)),"
    " ranked AS ("
    " SELECT i.product_id, (array_agg(i.name ORDER BY i.order_id DESC, i.id DESC))[1] AS name,"
    " sum(i.quantity)::bigint AS quantity,"
    " sum(i.quantity * i.unit_price_rupiah)::bigint AS revenue_rupiah"
    " FROM order_items i JOIN sold ON sold.id = i.order_id GROUP BY i.product_id"
    " ORDER BY quantity DESC, i.product_id LIMIT %(top)s)"
    " SELECT (SELECT count(*) FROM sold) AS orders,"
    " (SELECT coalesce(sum(total_rupiah), 0)::bigint FROM sold) AS revenue_rupiah,"
    " coalesce((SELECT jsonb_agg(jsonb_build_array(product_id, name, quantity, revenue_rupiah)"
    " ORDER BY quantity DESC, product_id) FROM ranked), '[]'::jsonb) AS top_products"
)
_CLAIM_IS_FREE = "r.sent_at IS NULL AND r.claimed_until <= %(now)s"
# As order_notifications' claim (see payments.py): one statement returns the row as it stands.
_CLAIM_SEND = (
    "INSERT INTO report_notifications AS r (report_key, sent_at, claim_token, claimed_until)"
    " VALUES (%(key)s, NULL, %(token)s, %(until)s)"
    " ON CONFLICT (report_key) DO UPDATE SET"
    f" claim_token = CASE WHEN {_CLAIM_IS_FREE} THEN excluded.claim_token ELSE r.claim_token END,"
    f" claimed_until = CASE WHEN {_CLAIM_IS_FREE}"
    " THEN excluded.claimed_until ELSE r.claimed_until END"
    " RETURNING r.sent_at, r.claim_token, r.claimed_until"
)
_RENEW_SEND = (
    "UPDATE report_notifications SET claimed_until = %(until)s WHERE report_key = %(key)s"
    " AND claim_token = %(token)s AND sent_at IS NULL RETURNING 1"
)
_RELEASE_SEND = (
    "DELETE FROM report_notifications WHERE report_key = %(key)s"
    " AND claim_token = %(token)s AND sent_at IS NULL"
)
_MARK_SENT = (
    "INSERT INTO report_notifications AS r (report_key, sent_at) VALUES (%(key)s, %(sent_at)s)"
    " ON CONFLICT (report_key) DO UPDATE SET sent_at = excluded.sent_at"
    " WHERE r.sent_at IS NULL RETURNING 1"
)


def _holder(
    *, sent_at: datetime | None, claim_token: str | None, claimed_until: datetime | None
) -> SendClaim | None:
    # The table's check: a row not yet sent always holds a claim.
    if sent_at is not None or claim_token is None or claimed_until is None:
        return None
    return SendClaim(claim_token, claimed_until)


_HOLDER_ROW = kwargs_row(_holder)


class PostgresSales:
    """Paid orders by the day their payment was applied."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def of_day(self, day: SalesDay, *, top: int) -> DailySales:
        """The day's paid orders, their revenue and the `top` products by quantity."""
        params = {"start": day.start, "end": day.end, "paid": OrderStatus.PAID.value, "top": top}
        [row] = await self._driver.rows(_SALES_OF_DAY, params, dict_row)
        products = tuple(ProductSales(*product) for product in row["top_products"])
        return DailySales(day.day, row["orders"], row["revenue_rupiah"], products)


class PostgresReports:
    """Reports e-mailed to the shop, one per key, and the claims to send them."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def claim_send(self, key: str, claim: SendClaim, now: datetime) -> SendClaim | None:
        """Take the send for `claim` unless a claim live at `now` holds it; None once sent."""
        params = {"key": key, "token": claim.token, "until": claim.until, "now": now}
        [row] = await self._driver.rows(_CLAIM_SEND, params, _HOLDER_ROW)
        return row

    async def renew_send(self, key: str, token: str, until: datetime) -> bool:
        """Move the unsent claim `token` holds to `until`; False if it no longer holds it."""
        params = {"key": key, "token": token, "until": until}
        return await self._driver.returned_row(_RENEW_SEND, params)

    async def release_send(self, key: str, token: str) -> None:
        """Drop the unsent claim `token` holds, if it still does."""
        await self._driver.run(_RELEASE_SEND, {"key": key, "token": token})

    async def mark_sent(self, key: str, sent_at: datetime) -> bool:
        """Record it sent, ending any claim; False if it already was."""
        return await self._driver.returned_row(_MARK_SENT, {"key": key, "sent_at": sent_at})
