"""Settlements (acks, nacks, dead-letters) the backend could not take: retried while the lease
holds, so a database or SQS gone for a second does not make finished jobs wait out their lease
and run again."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence

import anyio
from attrs import frozen

from skincare_core.jobs.backoff import jittered_pause
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics

logger = logging.getLogger("skincare_core.jobs.worker")
SETTLE_PAUSE_FIRST = 0.05
SETTLE_PAUSE_CAP = 2.0
Settle = Callable[[Sequence[Message]], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]


@frozen
class Leased:
    """A job to settle, and when its lease ends (on the `SettleRetry`'s clock, in seconds)."""

    message: Message
    until: float


class SettleRetry:
    """The retry rule of settlements: one that raises `Unavailable` is run again after a full
    jitter pause (50 ms, doubling to 2 s) as long as the lease still holds at the next try.

    After the lease the job is someone else's (a stale receipt changes nothing), so trying on
    would only cost requests. Any other error is a bug or a refusal: not retried. Every job
    given up is logged once, as `queue.settle_failed`, and counted once by `settle_failed`
    (at its first failure). `stop()` ends every retry at once: the worker's grace is over.
    `clock` (the leases' clock) and `sleep` are a test's to replace with fakes.
    """

    def __init__(
        self,
        *,
        queue: str,
        metrics: JobMetrics,
        lease: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._queue = queue
        self._metrics = metrics
        self._lease = lease
        self._clock = clock
        self._sleep = sleep or self._sleep_unless_stopped
        self._rng = rng or random.Random()
        self._stopped = False
        self._stop: anyio.Event | None = None

    def leased(self, message: Message, renewed: float) -> Leased:
        """`message`, whose lease was taken or last renewed at `renewed` (on the clock).

        The worker passes its slot's start or last heartbeat: the claim took the lease a moment
        before, so a last try may come after the lease by that moment, and change nothing.
        """
        return Leased(message, renewed + self._lease)

    def stop(self) -> None:
        """Give up every pending retry now; each is logged, none is tried again."""
        self._stopped = True
        if self._stop is not None:
            self._stop.set()

    async def settle(self, operation: Settle, pending: Sequence[Leased]) -> bool:
        """Run `operation` on the jobs, then `retry` it if it raised `Unavailable`; whether it
        went through for every one of them."""
        try:
            await operation([p.message for p in pending])
        except Unavailable as error:
            return await self.retry(operation, pending, error)
        except Exception as error:
            self.failed(pending, error, "not retried")
            return False
        return True

    async def retry(self, operation: Settle, pending: Sequence[Leased], error: Exception) -> bool:
        """After `operation` raised `error` (`Unavailable`) on `pending`: run it again on the
        jobs whose lease holds, pausing between tries, until it goes through or none is left."""
        self._note(pending, error)
        live, failures = list(pending), 1
        while isinstance(error, Unavailable):
            pause = self._pause(failures)
            live = self._holding(live, self._clock() + pause, error)
            if not live or not await self._paused(pause, live, error):
                return False
            attempted = await _attempt(operation, live)
            if attempted is None:
                _log_each(logging.INFO, "queue.settle_recovered", live, tries=failures + 1)
                return len(live) == len(pending)
            error, failures = attempted, failures + 1
        self._give_up(live, error, "not retried")
        return False

    def _pause(self, failures: int) -> float:
        return jittered_pause(
            failures - 1, self._rng, first=SETTLE_PAUSE_FIRST, cap=SETTLE_PAUSE_CAP
        )

    def failed(self, pending: Sequence[Leased], error: Exception, reason: str) -> None:
        """Count and log a settlement given up at its first failure."""
        for _ in pending:
            self._metrics.settle_failed(self._queue)
        self._give_up(pending, error, reason)

    def _note(self, pending: Sequence[Leased], error: Exception) -> None:
        for _ in pending:
            self._metrics.settle_failed(self._queue)
        _log_each(logging.WARNING, "queue.settle_retrying", pending, error=repr(error))

    def _holding(self, live: list[Leased], at: float, error: Exception) -> list[Leased]:
        over = [p for p in live if p.until <= at]
        self._give_up(over, error, "lease over")
        return [p for p in live if p.until > at]

    async def _paused(self, pause: float, live: list[Leased], error: Exception) -> bool:
        try:
            if not self._stopped:
                await self._sleep(pause)
        except anyio.get_cancelled_exc_class():
            self._give_up(live, error, "worker stopped")
            raise
        if self._stopped:
            self._give_up(live, error, "worker stopped")
        return not self._stopped

    async def _sleep_unless_stopped(self, seconds: float) -> None:
        if self._stop is None:
            self._stop = anyio.Event()
        with anyio.move_on_after(seconds):
            await self._stop.wait()

    @staticmethod
    def _give_up(pending: Sequence[Leased], error: Exception, reason: str) -> None:
        # The job stays leased and comes back when its lease expires.
        _log_each(logging.ERROR, "queue.settle_failed", pending, error=repr(error), reason=reason)


async def _attempt(operation: Settle, live: list[Leased]) -> Exception | None:
    try:
        await operation([p.message for p in live])
    except Exception as error:
        return error
    return None


def job_fields(message: Message, **extra: object) -> dict[str, object]:
    """The log fields of a job: id, type, attempts, and `extra`."""
    base = {"job_id": message.job.id, "type": message.job.type, "attempts": message.attempts}
    return {**base, **extra}


def _log_each(level: int, event: str, pending: Sequence[Leased], **fields: object) -> None:
    if logger.isEnabledFor(level):
        for p in pending:
            logger.log(level, event, extra=job_fields(p.message, **fields))
