"""Retry policies: how many attempts a job type gets and how long it waits between them."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta

from attrs import field, frozen


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
