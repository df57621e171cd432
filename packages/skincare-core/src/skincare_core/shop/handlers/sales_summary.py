"""The daily sales summary: the day before the tick's sales, e-mailed to the shop's admin once.

Sent like the order e-mails (`emails.py`): claim the send with a lease in a short transaction
(which also reads the sales), send with no transaction open, then record it. The claim is keyed
by the reported day, so however many deliveries of however many jobs run, one summary per day
goes out (a run that dies mid-send may, as there, cause one duplicate once its lease expires).
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from functools import partial

from skincare_core.jobs.definitions import current_job
from skincare_core.jobs.errors import RetryLater
from skincare_core.log_context import bind_fields
from skincare_core.shop.handlers.emails import SEND_LEASE
from skincare_core.shop.handlers.send_claims import ReportSend, SendClaims
from skincare_core.shop.job_types import SEND_DAILY_SALES_SUMMARY, SalesSummaryJob
from skincare_core.shop.models import DailySales, SendClaim
from skincare_core.shop.ports import Clock, EmailService, SalesSummaryEmail
from skincare_core.shop.sales import SHOP_TIMEZONE, SalesDay, day_before
from skincare_core.shop.unit_of_work import UnitOfWorkFactory

logger = logging.getLogger(__name__)

TOP_PRODUCTS = 5
"""How many best-selling products a summary lists."""


def report_key(day: SalesDay) -> str:
    """The key of the summary of `day`: one e-mail per key."""
    return f"{SEND_DAILY_SALES_SUMMARY}:{day.day.isoformat()}"


class SalesSummaryHandler:
    """E-mails `to` the sales of the day before each job's tick, at most once per day."""

    def __init__(
        self,
        *,
        uow: UnitOfWorkFactory,
        email: EmailService,
        clock: Clock,
        to: str,
        timezone: str = SHOP_TIMEZONE,
        language: str = "id",
        lease: timedelta = SEND_LEASE,
    ) -> None:
        self._uow = uow
        self._email = email
        self._clock = clock
        self._to = to
        self._timezone = timezone
        self._language = language
        self._claims = SendClaims(uow=uow, clock=clock, lease=lease)

    async def __call__(self, args: SalesSummaryJob) -> None:
        """Handle one job; RetryLater while another run sends the same day's summary."""
        job = current_job()
        bind_fields(tick=args.tick.isoformat())
        day = day_before(args.tick, self._timezone)
        target = ReportSend(report_key(day))
        claim = SendClaim(uuid.uuid4().hex, self._clock.now() + self._claims.lease)
        sales = await self._claim(target, claim, day)
        if sales is None:
            return
        data = SalesSummaryEmail(sales, job.id, self._language)
        send = partial(self._email.send_sales_summary, self._to, data)
        await self._claims.hold_while(target, claim, send)
        async with self._uow() as uow:
            recorded = await uow.reports.mark_sent(target.key, self._clock.now())
        if not recorded:
            logger.info("email.already_recorded", extra=dict(target.fields))

    async def _claim(
        self, target: ReportSend, claim: SendClaim, day: SalesDay
    ) -> DailySales | None:
        """The day's sales once this run holds the send; None when it was sent already."""
        now = self._clock.now()
        async with self._uow() as uow:
            holder = await uow.reports.claim_send(target.key, claim, now)
            ours = holder is not None and holder.token == claim.token
            # Read in the claim's transaction: one short round, and only by the sending run.
            sales = await uow.sales.of_day(day, top=TOP_PRODUCTS) if ours else None
        if holder is None:
            logger.info("email.already_sent", extra=dict(target.fields))
            return None
        if sales is None:
            logger.info("email.claimed_elsewhere", extra={**target.fields, "until": holder.until})
            raise RetryLater(max(holder.until - now, timedelta(0)), "another run is sending")
        return sales
