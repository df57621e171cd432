"""Property tests of the retry delays: the specified values exactly, monotone, bounded, jittered."""

from __future__ import annotations

import random
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.retry import backoff_delay, full_jitter_delay, receive_pause

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
