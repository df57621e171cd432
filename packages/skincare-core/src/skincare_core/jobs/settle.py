"""Runs one delivered job; settles a failure: nack with backoff, or dead-letter."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

import anyio

from skincare_core.jobs.errors import PermanentJobError, RetryLater
from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics, NoMetrics, Outcome
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.retry import RetryPolicies
from skincare_core.jobs.router import Router
from skincare_core.jobs.settle_retry import SettleRetry, job_fields
from skincare_core.jobs.slots import Slot
from skincare_core.jobs.tracing import JobTracer, NoTracer

logger = logging.getLogger("skincare_core.jobs.worker")


class Settler:
    """The retry rules: what each outcome of a handler does to its message.

    A nack or dead-letter the queue cannot take is retried by `retry` (default: a 30 s lease).
    """

    def __init__(
        self,
        *,
        queue: Queue,
        router: Router,
        max_attempts: int,
        job_timeout: float,
        backoff: Callable[[int], timedelta],
        policies: RetryPolicies,
        metrics: JobMetrics | None = None,
        tracer: JobTracer | None = None,
        retry: SettleRetry | None = None,
    ) -> None:
        self._queue = queue
        self._metrics = metrics or NoMetrics()
        self._retry = retry or SettleRetry(queue=queue.name, metrics=self._metrics, lease=30.0)
        self._tracer = tracer or NoTracer()
        self._router = router
        self._max_attempts = max_attempts
        self._job_timeout = job_timeout
        self._backoff = backoff
        self._policies = policies
        self._rng = random.Random()

    async def run(self, slot: Slot) -> bool:
        """Dispatch the slot's job: True if it succeeded (the caller acks it), else settle it.

        A cancelled job is nacked, then the cancellation re-raised.
        """
        message = slot.message
        if message.attempts > self._attempts_of(message):
            reason = f"crashed: {message.attempts - 1} deliveries never finished"
            self._metrics.started(self._queue.name, message.job.type, None)
            await self._dead_letter(slot, reason)
            self._metrics.finished(self._queue.name, message.job.type, "dead_lettered", 0.0)
            return False
        self._metrics.started(self._queue.name, message.job.type, _waited(message))
        started = time.perf_counter()
        try:
            await self._dispatch(slot)
        finally:
            duration = time.perf_counter() - started
            self._metrics.finished(self._queue.name, message.job.type, slot.outcome, duration)
        return slot.outcome == "done"

    async def _dispatch(self, slot: Slot) -> None:
        message = slot.message
        try:
            with self._tracer.job_span(message.job):
                await self._router.dispatch(message.job)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                slot.outcome = await self._cancelled(slot)
            raise
        except Exception as exc:
            slot.settling = True
            slot.outcome = await self.failed(slot, exc)
        else:
            # Only the handler's own cancellation is handled above; the ack is the caller's.
            slot.settling = True
            slot.outcome = "done"
            if logger.isEnabledFor(logging.INFO):
                logger.info("job.done", extra=job_fields(message))

    async def failed(self, slot: Slot, exc: Exception) -> Outcome:
        """Dead-letter a permanent error or the last attempt; otherwise nack with a delay."""
        message = slot.message
        error = f"{type(exc).__name__}: {exc}"
        # RetryLater only replaces the backoff delay; it still counts toward max_attempts.
        if isinstance(exc, PermanentJobError) or message.attempts >= self._attempts_of(message):
            await self._dead_letter(slot, error)
            return "dead_lettered"
        delay = exc.delay if isinstance(exc, RetryLater) else self._delay(message)
        fields = job_fields(message, delay=delay.total_seconds(), error=error)
        logger.warning("job.retry", extra=fields)
        await self._settle(slot, self._queue.nack, delay)
        return "retried"

    def _attempts_of(self, message: Message) -> int:
        policy = self._policies.get(message.job.type)
        return self._max_attempts if policy is None else policy.attempts

    def _delay(self, message: Message) -> timedelta:
        policy = self._policies.get(message.job.type)
        if policy is None:
            return self._backoff(message.attempts)
        return policy.delay(message.attempts, self._rng)

    async def _cancelled(self, slot: Slot) -> Outcome:
        if slot.timed_out:
            timeout = TimeoutError(f"ran longer than the job timeout of {self._job_timeout:g} s")
            return await self.failed(slot, timeout)
        logger.warning("job.cancelled", extra=job_fields(slot.message, delay=0.0))
        await self._settle(slot, self._queue.nack, timedelta(0))
        return "cancelled"

    async def _dead_letter(self, slot: Slot, reason: str) -> None:
        logger.error("job.dead_lettered", extra=job_fields(slot.message, error=reason))
        await self._settle(slot, self._queue.dead_letter, reason)

    async def extend(self, messages: list[Message], visibility: timedelta) -> None:
        """Renew the leases of `messages`; a failure risks only a second run (the lease expires)."""
        try:
            await self._queue.extend_many(messages, visibility)
        except Exception as exc:
            for message in messages:
                self._metrics.settle_failed(self._queue.name)
                logger.error("queue.settle_failed", extra=job_fields(message, error=repr(exc)))

    async def _settle(
        self, slot: Slot, operation: Callable[..., Awaitable[None]], *args: object
    ) -> None:
        # The runner waits here, its slot taken, while a settlement is retried.
        async def once(messages: Sequence[Message]) -> None:
            await operation(messages[0], *args)

        await self._retry.settle(once, [self._retry.leased(slot.message, slot.renewed)])


def _waited(message: Message) -> float | None:
    # A redelivery's wait includes its backoff or a lost lease: only first deliveries count.
    if message.enqueued_at is None or message.attempts != 1:
        return None
    return max((datetime.now(UTC) - message.enqueued_at).total_seconds(), 0.0)
