"""The daily sales summary on the in-memory kit: which day, which orders, once per day."""

from __future__ import annotations

from datetime import date, timedelta

import anyio
import pytest

from skincare_core.jobs.errors import InvalidJob, RetryLater
from skincare_core.jobs.job import Job, new_job
from skincare_core.shop.handlers import SalesSummaryHandler
from skincare_core.shop.job_types import DAILY_SALES_SUMMARY_JOB, SEND_DAILY_SALES_SUMMARY
from skincare_core.shop.models import DailySales, ProductSales
from skincare_core.shop.periodic import DAILY_SALES_SUMMARY
from skincare_core.shop.ports import SalesSummaryEmail
from tests.core.core_kit import Shop, make_shop, run_as_worker
from tests.core.sales_kit import ADMIN, at_run, product, sell, summary_job, summary_shop, wib

pytestmark = pytest.mark.anyio
# The 07:00 tick of 4 December in Jakarta, which reports 3 December.
TICK = wib(2026, 12, 4, 7)


@pytest.fixture
def shop() -> Shop:
    """The kit with an admin address."""
    return summary_shop()


async def summarise(shop: Shop, job: Job | None = None) -> SalesSummaryEmail:
    """Run the summary job of TICK (an hour late) and return the one summary sent."""
    at_run(shop, TICK + timedelta(hours=1))
    await shop.router.dispatch(job or summary_job(TICK))
    [mail] = shop.email.summaries
    assert mail.to == ADMIN
    return mail.data


async def test_the_schedule_is_seven_in_the_morning_in_jakarta() -> None:
    job = summary_job(TICK)
    assert job.type == SEND_DAILY_SALES_SUMMARY
    assert job.id == f"{DAILY_SALES_SUMMARY}-20261204T000000Z"
    assert job.payload["tick"] == "2026-12-04T00:00:00+00:00"


async def test_the_day_is_the_jakarta_calendar_day_before_the_tick(shop: Shop) -> None:
    serum = product(shop, "Serum", 100_000)
    await sell(shop, [(serum, 1)], paid_at=wib(2026, 12, 2, 23, 59, 59))  # 2 December
    first = await sell(shop, [(serum, 2)], paid_at=wib(2026, 12, 3, 0, 0, 0))
    last = await sell(shop, [(serum, 3)], paid_at=wib(2026, 12, 3, 23, 59, 59))
    await sell(shop, [(serum, 4)], paid_at=wib(2026, 12, 4, 0, 0, 0))  # 4 December
    data = await summarise(shop)
    assert data.sales.day == date(2026, 12, 3)
    assert data.sales.orders == 2
    assert data.sales.revenue_rupiah == first.total_rupiah + last.total_rupiah == 500_000
    assert data.idempotency_key == summary_job(TICK).id


async def test_only_paid_orders_are_sales_on_the_day_their_payment_arrived(shop: Shop) -> None:
    toner = product(shop, "Toner", 80_000)
    at_run(shop, wib(2026, 12, 2, 22))
    placed_before = await sell(shop, [(toner, 5)], paid_at=wib(2026, 12, 3, 9))
    at_run(shop, wib(2026, 12, 3, 10))
    await sell(shop, [(toner, 1)], paid_at=None)  # placed on the 3rd, still pending
    data = await summarise(shop)
    assert placed_before.created_at < wib(2026, 12, 3)
    assert (data.sales.orders, data.sales.revenue_rupiah) == (1, 400_000)


async def test_top_products_are_the_five_most_sold_by_quantity_ties_by_id(shop: Shop) -> None:
    items = [product(shop, f"P{n}", 10_000 * (n + 1)) for n in range(7)]
    paid = wib(2026, 12, 3, 12)
    await sell(shop, [(items[0], 1), (items[1], 4), (items[2], 2)], paid_at=paid)
    await sell(shop, [(items[3], 4), (items[4], 3), (items[5], 2), (items[6], 1)], paid_at=paid)
    await sell(shop, [(items[2], 1)], paid_at=paid)
    sales = (await summarise(shop)).sales
    assert [(p.name, p.quantity) for p in sales.top_products] == [
        ("P1", 4),
        ("P3", 4),
        ("P2", 3),
        ("P4", 3),
        ("P5", 2),
    ]
    assert sales.top_products[2] == ProductSales(items[2].id, "P2", 3, 90_000)
    assert (sales.orders, sales.revenue_rupiah) == (3, 680_000)


async def test_a_day_without_sales_still_gets_a_summary_saying_zero(shop: Shop) -> None:
    await sell(shop, [(product(shop, "Serum", 1_000), 1)], paid_at=wib(2026, 12, 4, 1))
    data = await summarise(shop)
    assert data.sales == DailySales(date(2026, 12, 3), 0, 0, ())


async def test_one_summary_per_day_whatever_the_deliveries_and_jobs(shop: Shop) -> None:
    await summarise(shop)
    await shop.router.dispatch(summary_job(TICK))
    # Another tick of the same Jakarta day (a changed cron, a redriven job) reports the same day.
    await shop.router.dispatch(summary_job(TICK + timedelta(hours=3)))
    assert len(shop.email.summaries) == 1
    assert shop.db.state.reports_sent.keys() == {f"{SEND_DAILY_SALES_SUMMARY}:2026-12-03"}


async def test_concurrent_deliveries_send_one_summary(shop: Shop) -> None:
    shop.email.delay = 0.02
    outcomes: list[BaseException | None] = []

    async def deliver() -> None:
        try:
            await shop.router.dispatch(summary_job(TICK))
        except RetryLater as error:
            outcomes.append(error)
        else:
            outcomes.append(None)

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(deliver)
    assert len(shop.email.summaries) == 1
    assert outcomes.count(None) == 1
    await shop.router.dispatch(summary_job(TICK))  # the retries then find it sent
    assert len(shop.email.summaries) == 1


async def test_a_failed_send_gives_the_claim_back_and_the_retry_sends(shop: Shop) -> None:
    shop.email.fail_next()
    with pytest.raises(ConnectionError):
        await shop.router.dispatch(summary_job(TICK))
    assert shop.db.state.report_claims == {}
    assert shop.db.state.reports_sent == {}
    await summarise(shop)


@pytest.mark.parametrize("tick", [None, "", "yesterday", "2026-12-04T00:00:00"])
async def test_a_job_without_an_aware_tick_is_invalid(shop: Shop, tick: str | None) -> None:
    payload = {} if tick is None else {"tick": tick}
    with pytest.raises(InvalidJob, match="tick"):
        await shop.router.dispatch(new_job(SEND_DAILY_SALES_SUMMARY, **payload))
    assert shop.email.summaries == []


async def test_without_an_admin_the_summary_is_not_served() -> None:
    assert SEND_DAILY_SALES_SUMMARY not in make_shop().router.job_types


async def test_a_send_longer_than_the_lease_renews_its_claim(shop: Shop) -> None:
    shop.email.delay = 0.2
    lease = timedelta(seconds=0.03)
    handler = run_as_worker(
        DAILY_SALES_SUMMARY_JOB,
        SalesSummaryHandler(uow=shop.db, email=shop.email, clock=shop.clock, to=ADMIN, lease=lease),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(handler, summary_job(TICK))
        await anyio.sleep(0.03)
        shop.clock.advance(timedelta(minutes=1))  # the first claim's lease is long gone
        await anyio.sleep(0.05)  # renewed meanwhile (every 10 ms) from the new time
        with pytest.raises(RetryLater):
            await handler(summary_job(TICK))
    assert len(shop.email.summaries) == 1
