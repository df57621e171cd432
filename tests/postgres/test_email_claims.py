"""Concurrent runs of one e-mail job on real PostgreSQL, each on its own connection, send once.

A run claims the send (a lease on the order_notifications row) in a short transaction before
calling the provider; a run that finds a live claim is told to retry when it ends.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs.errors import RetryLater
from skincare_core.jobs.job import Job, new_job
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import OrderEmailHandler
from skincare_core.shop.handlers.emails import SEND_LEASE
from skincare_core.shop.job_types import CONFIRMATION_EMAIL, SEND_CONFIRMATION_EMAIL
from skincare_core.shop.models import NotificationType, SendClaim
from skincare_core.shop.ports import EmailService
from skincare_core.testing.shop import ManualClock, RecordingEmailService
from skincare_email import MaildirEmailService
from skincare_postgres import PostgresDatabase
from tests.core.core_kit import JobRun, run_as_worker
from tests.gated_email import GatedEmail
from tests.postgres.pg_shop import Shop

pytestmark = pytest.mark.anyio
CONFIRMATION = NotificationType.ORDER_CONFIRMATION
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SEND_TIME = 0.3
RUNS = 10


class SlowMaildir(MaildirEmailService):
    """A maildir whose deliveries take a while, as a provider's do."""

    async def deliver(self, message: EmailMessage) -> None:
        await anyio.sleep(SEND_TIME)
        await super().deliver(message)


async def placed_order(db: PostgresDatabase, shop: Shop, clock: ManualClock) -> int:
    user, product = await shop.user(), await shop.product()
    await shop.cart(user, product, 1)
    return (await CheckoutService(uow=db, clock=clock).checkout(user.id, "k")).id


async def run_concurrently(handler: JobRun, job: Job, runs: int) -> int:
    """Run `job` `runs` times at once; how many runs were told to retry later."""
    held = 0

    async def run() -> None:
        nonlocal held
        try:
            await handler(job)
        except RetryLater:
            held += 1

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            for _ in range(runs):
                tg.start_soon(run)
    return held


def handler_for(db: PostgresDatabase, email: EmailService, clock: ManualClock) -> JobRun:
    handler = OrderEmailHandler(uow=db, email=email, clock=clock, kind=CONFIRMATION)
    return run_as_worker(CONFIRMATION_EMAIL, handler)


async def test_concurrent_runs_send_one_email(db: PostgresDatabase, shop: Shop) -> None:
    clock, email = ManualClock(), RecordingEmailService(delay=SEND_TIME)
    order_id = await placed_order(db, shop, clock)
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(order_id))
    held = await run_concurrently(handler_for(db, email, clock), job, RUNS)
    assert len(email.sent) == 1
    assert held >= 1  # some runs did overlap the send; the others found it recorded
    assert await shop.scalar("SELECT count(*) FROM order_notifications WHERE sent_at IS NOT NULL")
    # The runs told to retry come back once the claim has been recorded, and ack.
    assert await run_concurrently(handler_for(db, email, clock), job, RUNS) == 0
    assert len(email.sent) == 1


async def test_concurrent_runs_write_one_maildir_file(
    db: PostgresDatabase, shop: Shop, tmp_path: Path
) -> None:
    clock = ManualClock()
    maildir = SlowMaildir(tmp_path / "mail", "shop@skincare.test")
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(await placed_order(db, shop, clock)))
    await run_concurrently(handler_for(db, maildir, clock), job, RUNS)
    assert len(list((tmp_path / "mail" / "new").iterdir())) == 1


async def test_a_run_killed_mid_send_is_followed_by_one_send_after_the_lease(
    db: PostgresDatabase, shop: Shop
) -> None:
    clock, stuck, email = ManualClock(), GatedEmail(), RecordingEmailService(delay=SEND_TIME)
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(await placed_order(db, shop, clock)))
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(handler_for(db, stuck, clock), job)
            await stuck.sending.wait()
            tg.cancel_scope.cancel()
    handler = handler_for(db, email, clock)
    with pytest.raises(RetryLater) as held:
        await handler(job)
    assert held.value.delay == SEND_LEASE
    clock.advance(SEND_LEASE)
    await run_concurrently(handler, job, RUNS)
    assert len(email.sent) == 1
    assert await shop.scalar("SELECT count(*) FROM order_notifications WHERE sent_at IS NOT NULL")


async def test_a_long_send_renews_its_claim_so_no_other_run_sends(
    db: PostgresDatabase, shop: Shop
) -> None:
    clock, slow, email = ManualClock(), GatedEmail(), RecordingEmailService()
    lease = timedelta(seconds=0.3)
    job = new_job(SEND_CONFIRMATION_EMAIL, order_id=str(await placed_order(db, shop, clock)))
    renewed = "SELECT count(*) FROM order_notifications WHERE claimed_until > :now"
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                run_as_worker(
                    CONFIRMATION_EMAIL,
                    OrderEmailHandler(
                        uow=db, email=slow, clock=clock, kind=CONFIRMATION, lease=lease
                    ),
                ),
                job,
            )
            await slow.sending.wait()
            clock.advance(2 * lease)
            while not await shop.scalar(renewed, now=clock.now()):  # noqa: ASYNC110
                await anyio.sleep(0.02)
            assert await run_concurrently(handler_for(db, email, clock), job, RUNS) == RUNS
            slow.release.set()
    assert (len(slow.sent), len(email.sent)) == (1, 0)


async def test_a_claim_holds_until_it_expires_is_released_or_the_send_is_recorded(
    db: PostgresDatabase, shop: Shop
) -> None:
    order_id = await placed_order(db, shop, ManualClock())
    first, second = SendClaim("first", NOW + SEND_LEASE), SendClaim("second", NOW + 2 * SEND_LEASE)
    async with db() as uow:
        claims = uow.notifications
        assert await claims.claim_send(order_id, CONFIRMATION, first, NOW) == first
        assert await claims.claim_send(order_id, CONFIRMATION, second, NOW) == first
        assert not await claims.is_notified(order_id, CONFIRMATION)
        assert not await claims.renew_send(order_id, CONFIRMATION, "second", second.until)
        assert await claims.renew_send(order_id, CONFIRMATION, "first", second.until)
        assert await claims.claim_send(order_id, CONFIRMATION, second, first.until) == SendClaim(
            "first", second.until
        )
        await claims.release_send(order_id, CONFIRMATION, "second")
        assert await claims.claim_send(order_id, CONFIRMATION, second, second.until) == second
        await claims.release_send(order_id, CONFIRMATION, "second")
        assert await claims.claim_send(order_id, CONFIRMATION, first, NOW) == first
        await claims.mark_notified(order_id, CONFIRMATION, NOW)
        assert await claims.is_notified(order_id, CONFIRMATION)
        assert await claims.claim_send(order_id, CONFIRMATION, second, first.until) is None
        assert not await claims.renew_send(order_id, CONFIRMATION, "first", second.until)
        await claims.release_send(order_id, CONFIRMATION, "first")
        assert await claims.is_notified(order_id, CONFIRMATION)
    assert await shop.scalar("SELECT count(*) FROM order_notifications") == 1
