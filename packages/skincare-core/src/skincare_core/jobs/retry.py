"""Retry rules: how many attempts a job gets, how long it waits between them, and the jittered
pauses after a failed receive or settlement."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from datetime import timedelta

from attrs import field, frozen

from skincare_core.jobs.job import Message

BASE_DELAY = timedelta(seconds=5)
MAX_DELAY = timedelta(minutes=5)
RECEIVE_PAUSE_FIRST = 0.01
RECEIVE_PAUSE_CAP = 1.0


def backoff_delay(attempts: int) -> timedelta:
    """5 s for attempts <= 0, else 2**min(attempts, 6) seconds, capped at 5 minutes."""
    if attempts <= 0:
        return BASE_DELAY
    return min(timedelta(seconds=2 ** min(attempts, 6)), MAX_DELAY)


def full_jitter_delay(attempts: int, rng: random.Random) -> timedelta:
    """A uniform delay in [0, backoff_delay(attempts)]: spreads a thundering herd of retries."""
    ceiling = backoff_delay(attempts).total_seconds()
    return timedelta(seconds=rng.uniform(0.0, ceiling))


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


def _positive_delay(_: object, attribute: object, value: timedelta) -> None:
    if value <= timedelta(0):
        raise ValueError(f"a retry policy's base and cap must be positive, not {value}")


def _at_least_one(_: object, attribute: object, value: int) -> None:
    if value < 1:
        raise ValueError(f"a retry policy needs at least one attempt, not {value}")


@frozen
class RetryPolicy:
    """`attempts` in all; after failure n the wait is base * 2**(n-1), at most `cap`, and with
    `jitter` (full jitter) a uniform draw below that, so retries after an outage spread out."""

    attempts: int = field(validator=_at_least_one)
    base: timedelta = field(validator=_positive_delay)
    cap: timedelta = field(validator=_positive_delay)
    jitter: bool = True

    def delay(self, attempts: int, rng: random.Random) -> timedelta:
        """The wait after the `attempts`-th failed attempt."""
        # In float seconds: a doubled timedelta overflows long before the cap would apply.
        doubled = self.base.total_seconds() * 2.0 ** min(max(attempts - 1, 0), 64)
        ceiling = min(self.cap.total_seconds(), doubled)
        return timedelta(seconds=rng.uniform(0.0, ceiling) if self.jitter else ceiling)


RetryPolicies = Mapping[str, RetryPolicy]
"""Job type -> its policy; a type not in it gets the worker's default."""


class RetryRule:
    """A worker's retry rule: each job type's policy, else `max_attempts` waiting `backoff`."""

    def __init__(
        self,
        *,
        max_attempts: int,
        backoff: Callable[[int], timedelta] = backoff_delay,
        policies: RetryPolicies | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._policies = policies or {}
        self._rng = rng or random.Random()

    def attempts(self, job_type: str) -> int:
        """How many attempts a job of `job_type` gets in all."""
        policy = self._policies.get(job_type)
        return self._max_attempts if policy is None else policy.attempts

    def delay(self, message: Message) -> timedelta:
        """How long the job of `message`, whose attempt failed, waits before the next one."""
        policy = self._policies.get(message.job.type)
        if policy is None:
            return self._backoff(message.attempts)
        return policy.delay(message.attempts, self._rng)
