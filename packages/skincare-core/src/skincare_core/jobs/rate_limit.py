"""Rate limits: at most N job starts per second on a named queue, without touching attempts."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable

import anyio
from attrs import field, frozen

from skincare_core.jobs.ports import RateLimiter


def _positive(_: object, __: object, value: int) -> None:
    if value < 1:
        raise ValueError(f"a rate limit must be at least 1 job per second, got {value}")


@frozen
class RateLimit:
    """At most `per_second` jobs received per second under `key` (the queue's name)."""

    key: str
    per_second: int = field(validator=_positive)


class Throttle:
    """Asks a `RateLimiter` before each receive, so a job over the limit is never received: it
    waits in its queue, ready, with no attempt used and no retry counted."""

    def __init__(
        self,
        limiter: RateLimiter,
        limit: RateLimit,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self._limiter = limiter
        self._limit = limit
        self._clock = clock
        self._sleep = sleep

    async def take(self, wanted: int) -> int:
        """Wait until at least one of `wanted` starts is granted; how many were (<= wanted)."""
        while True:
            granted = await self._limiter.acquire(self._limit.key, wanted, self._limit.per_second)
            if granted:
                return granted
            now = self._clock()
            # Wake just after the next whole second, when a new window opens.
            await self._sleep(math.floor(now) + 1 - now + 0.001)
