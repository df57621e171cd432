"""Concurrent deliveries of one e-mail job send it once: the send is claimed, with a lease.

The rule: runs of one job that overlap send at most one e-mail between them; a run that dies
holding the claim (mid-send, or after the send but before the record) makes the next delivery
wait out the lease and then send once more, so e-mails sent = 1 + such deaths, never more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.errors import RetryLater
from skincare_core.jobs.job import Job, new_job
from skincare_core.shop.handlers import OrderEmailHandler
from skincare_core.shop.handlers.emails import SEND_LEASE
from skincare_core.shop.job_types import CONFIRMATION_EMAIL, SEND_CONFIRMATION_EMAIL
from skincare_core.shop.models import NotificationType, SendClaim
from tests.core.core_kit import Shop, make_shop, run_as_worker
from tests.gated_email import GatedEmail

pytestmark = pytest.mark.anyio
SEND_TIME = 0.02
KIND = NotificationType.ORDER_CONFIRMATION


class Crash(Exception):
    """The process dying after the provider took the e-mail, before it was recorded."""


async def confirmation_job(shop: Shop) -> Job:
    order = await shop.place_order()
    return new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order.id))


async def deliver_concurrently(
    shop: Shop, job: Job, runs: int, outcomes: list[BaseException | None] | None = None
) -> list[BaseException | None]:
    """`runs` deliveries of `job` at once; each one's outcome (None when acked) is appended."""
    outcomes = [] if outcomes is None else outcomes

    async def deliver() -> None:
        try:
            await shop.router.dispatch(job)
        except (RetryLater, ConnectionError, Crash) as error:
            outcomes.append(error)
        else:
            outcomes.append(None)

    async with anyio.create_task_group() as tg:
        for _ in range(runs):
            tg.start_soon(deliver)
    return outcomes


@pytest.mark.parametrize("runs", [2, 10])
async def test_concurrent_deliveries_send_one_email(runs: int) -> None:
    shop = make_shop()
    shop.email.delay = SEND_TIME
    job = await confirmation_job(shop)
    outcomes = await deliver_concurrently(shop, job, runs)
    assert len(shop.email.sent) == 1
    assert outcomes.count(None) == 1
    # The others saw a live claim and come back when it would end, when they will ack.
    assert all(isinstance(o, RetryLater) and o.delay == SEND_LEASE for o in outcomes if o)
    assert (await deliver_concurrently(shop, job, runs)) == [None] * runs
    assert len(shop.email.sent) == 1


async def test_a_run_that_died_after_sending_is_sent_once_more_after_the_lease(
    shop: Shop,
) -> None:
    job = await confirmation_job(shop)
    shop.db.fail_next("mark_notified", Crash())
    with pytest.raises(Crash):
        await shop.router.dispatch(job)
    assert len(shop.email.sent) == 1
    shop.clock.advance(SEND_LEASE - timedelta(seconds=1))
    with pytest.raises(RetryLater) as held:
        await shop.router.dispatch(job)
    assert held.value.delay == timedelta(seconds=1)
    assert len(shop.email.sent) == 1
    shop.clock.advance(timedelta(seconds=1))
    await shop.router.dispatch(job)
    await shop.router.dispatch(job)
    assert len(shop.email.sent) == 2
    assert (int(str(job.payload["order_id"])), KIND) in shop.db.state.notifications


async def eventually(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def test_a_run_killed_mid_send_leaves_the_claim_to_expire(shop: Shop) -> None:
    job = await confirmation_job(shop)
    stuck = GatedEmail()
    async with anyio.create_task_group() as tg:
        handler = OrderEmailHandler(uow=shop.db, email=stuck, clock=shop.clock, kind=KIND)
        tg.start_soon(run_as_worker(CONFIRMATION_EMAIL, handler), job)
        await stuck.sending.wait()
        tg.cancel_scope.cancel()
    with pytest.raises(RetryLater) as held:
        await shop.router.dispatch(job)
    assert held.value.delay == SEND_LEASE
    shop.clock.advance(SEND_LEASE)
    await shop.router.dispatch(job)
    assert len(shop.email.sent) == 1


async def test_a_failed_release_keeps_the_send_error(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    job = await confirmation_job(shop)
    shop.email.fail_next()
    shop.db.fail_next("release_send", RuntimeError("database gone"))
    with pytest.raises(ConnectionError):
        await shop.router.dispatch(job)
    assert "email.claim_not_released" in caplog.messages
    with pytest.raises(RetryLater):
        await shop.router.dispatch(job)


SHORT_LEASE = timedelta(seconds=0.3)


def renewed(shop: Shop, job: Job) -> bool:
    """Whether the job's claim holds beyond the (fake) present."""
    claim = shop.db.state.send_claims.get((int(str(job.payload["order_id"])), KIND))
    return claim is not None and claim.until > shop.clock.now()


async def test_a_long_send_renews_its_claim_so_no_other_run_sends(shop: Shop) -> None:
    job = await confirmation_job(shop)
    slow = GatedEmail()
    handler = run_as_worker(
        CONFIRMATION_EMAIL,
        OrderEmailHandler(uow=shop.db, email=slow, clock=shop.clock, kind=KIND, lease=SHORT_LEASE),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(handler, job)
        await slow.sending.wait()
        shop.clock.advance(2 * SHORT_LEASE)
        await eventually(lambda: renewed(shop, job))
        with pytest.raises(RetryLater):
            await shop.router.dispatch(job)
        slow.release.set()
    await shop.router.dispatch(job)
    assert (len(slow.sent), len(shop.email.sent)) == (1, 0)


async def test_a_claim_that_lapses_unrenewed_is_taken_over_and_the_loss_logged(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    job = await confirmation_job(shop)
    slow = GatedEmail()
    handler = run_as_worker(
        CONFIRMATION_EMAIL,
        OrderEmailHandler(uow=shop.db, email=slow, clock=shop.clock, kind=KIND, lease=SHORT_LEASE),
    )
    caplog.set_level(logging.INFO)
    shop.db.fail_next("renew_send", RuntimeError("database gone"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(handler, job)
        await slow.sending.wait()
        shop.clock.advance(2 * SHORT_LEASE)
        await eventually(lambda: "email.claim_not_renewed" in caplog.messages)
        await shop.router.dispatch(job)
        await eventually(lambda: "email.claim_lost" in caplog.messages)
        slow.release.set()
    # The documented duplicate: a send that outlived its unrenewed lease, and the takeover.
    assert (len(slow.sent), len(shop.email.sent)) == (1, 1)
    assert "email.already_recorded" in caplog.messages


rounds = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=5),
        st.sampled_from(["ok", "email_fails", "crash_after_send", "die_mid_send"]),
        st.sampled_from([timedelta(0), SEND_LEASE / 2, SEND_LEASE]),
    ),
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(rounds)
async def test_sent_emails_are_one_plus_the_runs_that_died_after_sending(
    steps: list[tuple[int, str, timedelta]],
) -> None:
    shop = make_shop()
    shop.email.delay = SEND_TIME
    job = await confirmation_job(shop)
    outcomes: list[BaseException | None] = []
    for runs, fault, later in steps:
        before = len(shop.email.sent)
        if fault == "email_fails":
            shop.email.fail_next()
        elif fault == "crash_after_send":
            shop.db.fail_next("mark_notified", Crash())
        with anyio.move_on_after(SEND_TIME / 2 if fault == "die_mid_send" else 60):
            await deliver_concurrently(shop, job, runs, outcomes)
        assert len(shop.email.sent) - before <= 1
        shop.clock.advance(later)
    await redeliver_until_acked(shop, job, outcomes)
    assert len(shop.email.sent) == 1 + sum(isinstance(o, Crash) for o in outcomes)


async def redeliver_until_acked(shop: Shop, job: Job, outcomes: list[BaseException | None]) -> None:
    """The queue's part: deliver again after each RetryLater's delay, or after any failure.

    Faults injected in rounds where no run sent are still pending: each costs one delivery.
    """
    for _ in range(30):
        await deliver_concurrently(shop, job, 1, outcomes)
        outcome = outcomes[-1]
        if outcome is None:
            return
        if isinstance(outcome, RetryLater):
            shop.clock.advance(outcome.delay)
    pytest.fail("the job was never acked")


async def test_a_claim_holds_until_it_expires_is_released_or_the_send_is_recorded(
    shop: Shop,
) -> None:
    order_id = (await shop.place_order()).id
    now = shop.clock.now()
    first, second = SendClaim("first", now + SEND_LEASE), SendClaim("second", now + 2 * SEND_LEASE)
    async with shop.db() as uow:
        claims = uow.notifications
        assert await claims.claim_send(order_id, KIND, first, now) == first
        assert await claims.claim_send(order_id, KIND, second, now) == first
        assert not await claims.is_notified(order_id, KIND)
        await claims.release_send(order_id, KIND, "second")
        assert await claims.claim_send(order_id, KIND, second, first.until) == second
        await claims.release_send(order_id, KIND, "second")
        assert await claims.claim_send(order_id, KIND, first, now) == first
        await claims.mark_notified(order_id, KIND, now)
        assert await claims.is_notified(order_id, KIND)
        assert await claims.claim_send(order_id, KIND, second, first.until) is None
