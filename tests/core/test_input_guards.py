"""Inputs core refuses at the door, so they never become jobs or settings that cannot work."""

from __future__ import annotations

from datetime import timedelta

import pytest

from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.shop.job_types import PROCESS_PAYMENT
from skincare_core.shop.models import OrderStatus, PaymentEvent
from skincare_core.shop.webhooks import InvalidPaymentEvent, PaymentWebhookService
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.core_kit import Shop

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("event_id", [" ", "\t\n", "   "])
async def test_a_blank_event_id_is_refused_before_anything_is_stored(
    shop: Shop, event_id: str
) -> None:
    order = await shop.place_order()
    event = PaymentEvent(event_id, order.id, "paid", order.total_rupiah)
    with pytest.raises(InvalidPaymentEvent):
        await PaymentWebhookService(uow=shop.db).receive(event)
    assert (shop.db.state.payments, shop.queue.jobs()) == ({}, [])


async def test_every_event_id_the_webhook_accepts_is_one_the_handler_can_read(
    shop: Shop,
) -> None:
    order = await shop.place_order(quantity=1, price=10_000)
    event = PaymentEvent(" evt-7 ", order.id, "paid", 10_000)
    assert await PaymentWebhookService(uow=shop.db).receive(event)
    [job] = shop.queue.jobs()
    assert (job.type, job.payload["event_id"]) == (PROCESS_PAYMENT, " evt-7 ")
    await shop.router.dispatch(job)
    assert shop.db.state.orders[order.id].status is OrderStatus.PAID


@pytest.mark.parametrize("option", ["visibility_timeout", "job_timeout"])
@pytest.mark.parametrize("value", [timedelta(0), timedelta(seconds=-1)])
def test_a_non_positive_timing_is_refused(option: str, value: timedelta) -> None:
    queue = InMemoryQueue()
    with pytest.raises(ValueError, match="must be positive"):
        Worker(queue=queue, router=Router(), **{option: value})  # type: ignore[arg-type]
