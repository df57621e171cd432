"""Rate limits: at most N job starts per second on a named queue or of a job type, without
touching attempts."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable

import anyio
from attrs import field, frozen

from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import RateLimiter
from skincare_core.jobs.router import Handler


def _positive(_: object, __: object, value: int) -> None:
    if value < 1:
        raise ValueError(f"a rate limit must be at least 1 job per second, got {value}")


@frozen
class RateLimit:
    """At most `per_second` jobs started per second under `key` (a queue's name, or
    `type:<job type>`)."""

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


def throttled(handler: Handler, throttle: Throttle) -> Handler:
    """`handler`, started at most at the throttle's rate: one job type's limit.

    A job over the limit waits for its turn in its worker slot, its lease kept by the heartbeat:
    it is not failed and uses no attempt. The wait counts towards the job timeout, and waiting
    jobs hold slots their queue's other types could use: a type limited far below its queue's
    traffic is better routed to a queue of its own, limited there before it is received.
    """

    async def run(job: Job) -> None:
        await throttle.take(1)
        await handler(job)

    return run
