"""The retry rules: the backoff's delays exactly, monotone, bounded, jittered; the receive pause;
retry policies per job type, and what the shop's policies survive."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.executor import Executor
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Burial, Retry, Settlement
from skincare_core.jobs.retry import (
    RetryPolicies,
    RetryPolicy,
    RetryRule,
    backoff_delay,
    full_jitter_delay,
    receive_pause,
)
from skincare_core.jobs.router import Router
from skincare_core.shop.job_types import PROCESS_PAYMENT, SEND_CONFIRMATION_EMAIL, SHOP_JOBS
from skincare_core.testing.jobs import InMemoryQueue

FIVE_MINUTES = timedelta(minutes=5)
SEED_TABLE = {0: 5, 1: 2, 2: 4, 3: 8, 4: 16, 5: 32, 6: 64, 7: 64, 100: 64, -1: 5}


def reference_delay(attempts: int) -> timedelta:
    """The rule written out independently: 5 s at <= 0, else 2**min(n, 6) s, capped at 300 s."""
    if attempts <= 0:
        return timedelta(seconds=5)
    return min(timedelta(seconds=2 ** min(attempts, 6)), FIVE_MINUTES)


def test_known_values_of_the_seed() -> None:
    assert {a: backoff_delay(a).total_seconds() for a in SEED_TABLE} == SEED_TABLE


@given(st.integers(min_value=-10, max_value=100))
def test_backoff_is_exactly_the_seed(attempts: int) -> None:
    assert backoff_delay(attempts) == reference_delay(attempts)


@given(st.integers(min_value=1, max_value=100), st.integers(min_value=0, max_value=100))
def test_backoff_never_decreases_after_the_first_attempt(attempts: int, more: int) -> None:
    assert backoff_delay(attempts) <= backoff_delay(attempts + more)


@given(st.integers())
def test_backoff_is_positive_and_at_most_five_minutes(attempts: int) -> None:
    assert timedelta(0) < backoff_delay(attempts) <= FIVE_MINUTES


@given(st.integers(min_value=-10, max_value=100), st.integers())
def test_full_jitter_stays_within_zero_and_the_backoff(attempts: int, seed: int) -> None:
    delay = full_jitter_delay(attempts, random.Random(seed))
    assert timedelta(0) <= delay <= backoff_delay(attempts)


@given(st.integers(min_value=1, max_value=100), st.integers())
def test_full_jitter_is_reproducible_from_the_seed(attempts: int, seed: int) -> None:
    first = full_jitter_delay(attempts, random.Random(seed))
    assert first == full_jitter_delay(attempts, random.Random(seed))


@given(st.integers(min_value=0, max_value=10_000), st.integers())
def test_a_receive_pause_is_within_zero_and_its_doubling_ceiling(failures: int, seed: int) -> None:
    pause = receive_pause(failures, random.Random(seed))
    assert 0.0 <= pause <= min(1.0, 0.01 * 2 ** min(failures, 16))


def test_the_first_retry_after_a_lost_connection_waits_at_most_10_ms() -> None:
    rng = random.Random(7)
    assert max(receive_pause(0, rng) for _ in range(1_000)) <= 0.01
    # A long outage settles at no more than one receive a second, spread over [0, 1 s].
    assert 0.5 < max(receive_pause(50, rng) for _ in range(1_000)) <= 1.0


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
    assert await _outage(SEND_CONFIRMATION_EMAIL, SHOP_JOBS.retry_policies, 3_600.0, 200) == 0


@pytest.mark.anyio
async def test_the_seed_formula_alone_dead_letters_every_e_mail_of_a_31_s_outage() -> None:
    assert await _outage(SEND_CONFIRMATION_EMAIL, {}, 31.0, 50) == 50


@pytest.mark.anyio
async def test_a_payment_gives_up_within_about_a_minute_of_failures() -> None:
    assert await _outage(PROCESS_PAYMENT, SHOP_JOBS.retry_policies, 120.0, 50) == 50


@given(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=20))
def test_a_rule_gives_a_type_its_policy_and_every_other_type_the_default(
    max_attempts: int, attempts: int
) -> None:
    policy = RetryPolicy(attempts=attempts, base=timedelta(seconds=1), cap=timedelta(seconds=4))
    rule = RetryRule(max_attempts=max_attempts, policies={"mail": policy})
    assert (rule.attempts("mail"), rule.attempts("other")) == (attempts, max_attempts)


@given(st.integers(min_value=1, max_value=40), st.integers())
def test_a_rule_waits_the_backoff_or_the_type_s_policy(attempts: int, seed: int) -> None:
    policy = RetryPolicy(attempts=50, base=timedelta(seconds=1), cap=timedelta(seconds=4))
    rule = RetryRule(max_attempts=5, policies={"mail": policy}, rng=random.Random(seed))
    other = Message("r", new_job("other"), attempts)
    mail = Message("r", new_job("mail"), attempts)
    assert rule.delay(other) == backoff_delay(attempts)
    assert (
        timedelta(0)
        <= rule.delay(mail)
        <= min(timedelta(seconds=4), timedelta(seconds=2 ** (attempts - 1)))
    )
