"""Runs one delivered job and settles it: ack, nack with backoff, or dead-letter."""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from datetime import timedelta

import anyio

from skincare_core.jobs.errors import PermanentJobError, RetryLater
from skincare_core.jobs.job import Message
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.retry import RetryPolicies
from skincare_core.jobs.router import Router
from skincare_core.jobs.slots import Slot

logger = logging.getLogger("skincare_core.jobs.worker")


def _fields(message: Message, **extra: object) -> dict[str, object]:
    base = {"job_id": message.job.id, "type": message.job.type, "attempts": message.attempts}
    return {**base, **extra}


class Settler:
    """The retry rules: what each outcome of a handler does to its message."""

    def __init__(
        self,
        *,
        queue: Queue,
        router: Router,
        max_attempts: int,
        job_timeout: float,
        backoff: Callable[[int], timedelta],
        policies: RetryPolicies,
    ) -> None:
        self._queue = queue
        self._router = router
        self._max_attempts = max_attempts
        self._job_timeout = job_timeout
        self._backoff = backoff
        self._policies = policies
        self._rng = random.Random()

    async def run(self, slot: Slot) -> None:
        """Dispatch the slot's job and settle it; a cancelled job is nacked, then re-raised."""
        message = slot.message
        if message.attempts > self._attempts_of(message):
            reason = f"crashed: {message.attempts - 1} deliveries never finished"
            await self._dead_letter(message, reason)
            return
        try:
            await self._router.dispatch(message.job)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancelled(slot)
            raise
        except Exception as exc:
            slot.settling = True
            await self.failed(message, exc)
        else:
            slot.settling = True
            logger.info("job.done", extra=_fields(message))
            await self.safely(self._queue.ack, message)

    async def failed(self, message: Message, exc: Exception) -> None:
        """Dead-letter a permanent error or the last attempt; otherwise nack with a delay."""
        error = f"{type(exc).__name__}: {exc}"
        # RetryLater only replaces the backoff delay; it still counts toward max_attempts.
        if isinstance(exc, PermanentJobError) or message.attempts >= self._attempts_of(message):
            await self._dead_letter(message, error)
            return
        delay = exc.delay if isinstance(exc, RetryLater) else self._delay(message)
        fields = _fields(message, delay=delay.total_seconds(), error=error)
        logger.warning("job.retry", extra=fields)
        await self.safely(self._queue.nack, message, delay)

    def _attempts_of(self, message: Message) -> int:
        policy = self._policies.get(message.job.type)
        return self._max_attempts if policy is None else policy.attempts

    def _delay(self, message: Message) -> timedelta:
        policy = self._policies.get(message.job.type)
        if policy is None:
            return self._backoff(message.attempts)
        return policy.delay(message.attempts, self._rng)

    async def _cancelled(self, slot: Slot) -> None:
        if slot.timed_out:
            timeout = TimeoutError(f"ran longer than the job timeout of {self._job_timeout:g} s")
            await self.failed(slot.message, timeout)
            return
        logger.warning("job.cancelled", extra=_fields(slot.message, delay=0.0))
        await self.safely(self._queue.nack, slot.message, timedelta(0))

    async def _dead_letter(self, message: Message, reason: str) -> None:
        logger.error("job.dead_lettered", extra=_fields(message, error=reason))
        await self.safely(self._queue.dead_letter, message, reason)

    @staticmethod
    async def safely(
        operation: Callable[..., Awaitable[None]], message: Message, *args: object
    ) -> None:
        """Run a queue operation; a failure only delays the job (its lease expires)."""
        try:
            await operation(message, *args)
        except Exception as exc:
            logger.error("queue.settle_failed", extra=_fields(message, error=repr(exc)))
