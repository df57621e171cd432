"""The shop's periodic jobs, declared in code like any team's (`Schedules`)."""

from __future__ import annotations

from skincare_core.jobs.scheduler import Schedules
from skincare_core.shop.job_types import SEND_DAILY_SALES_SUMMARY
from skincare_core.shop.sales import SHOP_TIMEZONE

DAILY_SALES_SUMMARY = "daily-sales-summary"
"""The schedule of the daily sales summary: 07:00 in Jakarta, reporting the day before."""


def add_daily_sales_summary(schedules: Schedules) -> None:
    """Add the daily sales summary's schedule (cron `0 7 * * *`, Asia/Jakarta)."""
    schedules.add(
        DAILY_SALES_SUMMARY, "0 7 * * *", SEND_DAILY_SALES_SUMMARY, timezone=SHOP_TIMEZONE
    )
