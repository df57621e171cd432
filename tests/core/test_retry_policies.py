"""Retry policies per job type: the delay rule, and what the shop's policies survive."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.executor import Executor
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.ports import Burial, Retry, Settlement
from skincare_core.jobs.retry import RetryPolicies, RetryPolicy, RetryRule, backoff_delay
from skincare_core.jobs.router import Router
from skincare_core.shop.job_types import PROCESS_PAYMENT, SEND_CONFIRMATION_EMAIL
from skincare_core.shop.retry_policies import SHOP_RETRY_POLICIES
from skincare_core.testing.jobs import InMemoryQueue

seconds = st.integers(min_value=1, max_value=3_600).map(lambda s: timedelta(seconds=s))


@given(st.integers(min_value=1, max_value=40), seconds, seconds, st.integers())
def test_a_jittered_delay_lies_between_zero_and_the_capped_doubling(
    attempts: int, base: timedelta, cap: timedelta, seed: int
) -> None:
    policy = RetryPolicy(attempts=50, base=base, cap=cap)
    ceiling = min(cap.total_seconds(), base.total_seconds() * 2.0 ** (attempts - 1))
    delay = policy.delay(attempts, random.Random(seed)).total_seconds()
    assert 0.0 <= delay <= ceiling


@given(st.integers(min_value=1, max_value=40), seconds, seconds)
def test_without_jitter_the_delay_is_the_capped_doubling(
    attempts: int, base: timedelta, cap: timedelta
) -> None:
    policy = RetryPolicy(attempts=50, base=base, cap=cap, jitter=False)
    ceiling = min(cap.total_seconds(), base.total_seconds() * 2.0 ** (attempts - 1))
    assert policy.delay(attempts, random.Random(0)).total_seconds() == pytest.approx(ceiling)


@pytest.mark.parametrize(
    ("attempts", "base", "cap"),
    [(0, timedelta(seconds=1), timedelta(seconds=1)), (3, timedelta(0), timedelta(seconds=1))],
)
def test_a_policy_without_attempts_or_with_no_delay_is_refused(
    attempts: int, base: timedelta, cap: timedelta
) -> None:
    with pytest.raises(ValueError, match="retry policy"):
        RetryPolicy(attempts=attempts, base=base, cap=cap)


async def settle(queue: InMemoryQueue, settlement: Settlement) -> None:
    """Settle one job as the completer would."""
    if isinstance(settlement, Retry):
        await queue.retry_many([settlement])
    elif isinstance(settlement, Burial):
        await queue.dead_letter_many([settlement])
    else:
        await queue.ack_many([settlement])


async def _outage(job_type: str, policies: RetryPolicies, outage: float, jobs: int) -> int:
    """Run `jobs` jobs on a fake clock against a provider down for `outage` seconds; how many
    ended in the dead letters."""
    now = [0.0]
    queue = InMemoryQueue(wait=timedelta(0), monotonic=lambda: now[0])

    async def provider(job: Job) -> None:
        if now[0] < outage:
            raise ConnectionError("451 try again later")

    router = Router()
    router.register(job_type, provider)
    executor = Executor(
        queue=queue.name,
        router=router,
        retry=RetryRule(max_attempts=5, backoff=backoff_delay, policies=policies),
        job_timeout=300.0,
    )
    for _ in range(jobs):
        await enqueue_job(queue, new_job(job_type))
    while queue.depth:
        messages = await queue.receive(100)
        for message in messages:
            # The executor says what becomes of the job; the worker's completer would settle it.
            await settle(queue, await executor.run(message))
        if not messages:
            now[0] += 1.0
    return len(await queue.list(limit=10_000))


@pytest.mark.anyio
async def test_an_hour_long_e_mail_outage_loses_no_e_mail_under_the_shop_policy() -> None:
    assert await _outage(SEND_CONFIRMATION_EMAIL, SHOP_RETRY_POLICIES, 3_600.0, 200) == 0


@pytest.mark.anyio
async def test_the_seed_formula_alone_dead_letters_every_e_mail_of_a_31_s_outage() -> None:
    assert await _outage(SEND_CONFIRMATION_EMAIL, {}, 31.0, 50) == 50


@pytest.mark.anyio
async def test_a_payment_gives_up_within_about_a_minute_of_failures() -> None:
    assert await _outage(PROCESS_PAYMENT, SHOP_RETRY_POLICIES, 120.0, 50) == 50
