"""Retry delays: exponential backoff (5 s for attempts <= 0, else 2**min(attempts, 6) s, capped
at 5 minutes), an opt-in full-jitter variant of it, and the jittered pauses after a failed
receive or settlement."""

from __future__ import annotations

import random
from datetime import timedelta

BASE_DELAY = timedelta(seconds=5)
MAX_DELAY = timedelta(minutes=5)


def backoff_delay(attempts: int) -> timedelta:
    """5 s for attempts <= 0, else 2**min(attempts, 6) seconds, capped at 5 minutes."""
    if attempts <= 0:
        return BASE_DELAY
    return min(timedelta(seconds=2 ** min(attempts, 6)), MAX_DELAY)


def full_jitter_delay(attempts: int, rng: random.Random) -> timedelta:
    """A uniform delay in [0, backoff_delay(attempts)]: spreads a thundering herd of retries."""
    ceiling = backoff_delay(attempts).total_seconds()
    return timedelta(seconds=rng.uniform(0.0, ceiling))


RECEIVE_PAUSE_FIRST = 0.01
RECEIVE_PAUSE_CAP = 1.0


def jittered_pause(failures: int, rng: random.Random, *, first: float, cap: float) -> float:
    """Seconds to wait after `failures` failures in a row: uniform in [0, first * 2**failures],
    the ceiling capped at `cap` (full jitter, so many waiters do not retry in step)."""
    ceiling = min(cap, first * 2 ** min(failures, 16))
    return rng.uniform(0.0, ceiling)


def receive_pause(failures: int, rng: random.Random) -> float:
    """Seconds to wait after `failures` receives in a row failed: uniform in [0, 10 ms * 2**n],
    the ceiling capped at 1 s. A lost connection is retried at once; an outage costs one try a
    second, and many workers do not reconnect in step."""
    return jittered_pause(failures, rng, first=RECEIVE_PAUSE_FIRST, cap=RECEIVE_PAUSE_CAP)
