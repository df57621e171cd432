"""Which day a sales summary reports, and which orders are that day's sales.

Sales are the orders whose payment arrived (status `paid`), counted on the day the payment was
applied (the first paid payment event's `paid_at`), in the shop's time zone. Not the day the
order was placed: an order placed at 23:50 and paid at 08:00 the next day would then be missing
from both days' summaries (the first was sent before the money came). Pending orders may still
expire, and expired or cancelled ones never brought money, so neither is revenue. So each paid
order is counted exactly once, and the days' revenues add up to what the shop was paid.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from attrs import frozen

SHOP_TIMEZONE = "Asia/Jakarta"
"""The shop's calendar: the day a summary reports begins and ends at midnight here."""


@frozen
class SalesDay:
    """A calendar `day` in a time zone, as the instants `[start, end)` (aware, UTC)."""

    day: date
    start: datetime
    end: datetime


def day_before(tick: datetime, timezone: str = SHOP_TIMEZONE) -> SalesDay:
    """The calendar day (in `timezone`) before the one holding `tick`.

    The tick is the schedule's, carried by its job, not the time the job runs: a summary that
    runs late (a worker was down, the job was retried) still reports the day it was meant for.
    """
    if tick.utcoffset() is None:
        raise ValueError("the tick must be timezone-aware")
    zone = ZoneInfo(timezone)
    day = tick.astimezone(zone).date() - timedelta(days=1)
    return SalesDay(day, _midnight(day, zone), _midnight(day + timedelta(days=1), zone))


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
