"""The worker engine: bounded concurrency, ack/nack/dead-letter, leases, graceful stop."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anyio
from anyio.abc import TaskGroup

from skincare_core.backoff import backoff_delay
from skincare_core.errors import PermanentJobError, RetryLater
from skincare_core.jobs import Message
from skincare_core.queueing import Queue
from skincare_core.router import Router

logger = logging.getLogger(__name__)
_QUEUE_ERROR_PAUSE = 1.0
_REFILL_WAIT = 0.005


def _fields(message: Message, **extra: Any) -> dict[str, Any]:
    base = {"job_id": message.job.id, "type": message.job.type, "attempts": message.attempts}
    return {**base, **extra}


class Worker:
    """Runs jobs from a queue through a router until its cancel scope is cancelled."""

    def __init__(
        self,
        *,
        queue: Queue,
        router: Router,
        concurrency: int = 16,
        max_attempts: int = 5,
        job_timeout: timedelta = timedelta(minutes=5),
        visibility_timeout: timedelta = timedelta(seconds=30),
        shutdown_grace: timedelta = timedelta(seconds=25),
        receive_batch: int = 10,
        backoff: Callable[[int], timedelta] = backoff_delay,
    ) -> None:
        if concurrency < 1 or max_attempts < 1 or receive_batch < 1:
            raise ValueError("concurrency, max_attempts and receive_batch must be >= 1")
        # A zero visibility makes the heartbeat sleep 0 s: a busy loop extending every lease.
        if visibility_timeout <= timedelta(0) or job_timeout <= timedelta(0):
            raise ValueError("visibility_timeout and job_timeout must be positive")
        self._queue = queue
        self._router = router
        self._concurrency = concurrency
        self._max_attempts = max_attempts
        self._job_timeout = job_timeout.total_seconds()
        self._visibility = visibility_timeout
        self._grace = shutdown_grace.total_seconds()
        self._batch = receive_batch
        self._backoff = backoff
        self._scopes: dict[int, anyio.CancelScope] = {}
        self._leases: dict[int, tuple[Message, float]] = {}
        self._changed: anyio.Event | None = None

    @property
    def in_flight(self) -> int:
        """Jobs running now."""
        return len(self._scopes)

    async def run(self) -> None:
        """Receive and run jobs; on cancellation stop receiving and drain within the grace."""
        async with anyio.create_task_group() as tg:
            heartbeat = anyio.CancelScope(shield=True)
            tg.start_soon(self._heartbeat, heartbeat)
            try:
                while True:
                    await self._receive_into(tg)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._drain()
                    heartbeat.cancel()
                raise

    async def _receive_into(self, tg: TaskGroup) -> None:
        while self.in_flight >= self._concurrency:
            await self._wait_for_change()
        await self._let_slots_accumulate()
        wanted = min(self._concurrency - self.in_flight, self._batch)
        try:
            messages = await self._queue.receive(wanted)
        except Exception as exc:
            logger.error("queue.receive_failed", extra={"error": repr(exc)})
            await anyio.sleep(_QUEUE_ERROR_PAUSE)
            return
        now = anyio.current_time()
        for message in messages:
            scope = anyio.CancelScope(shield=True)
            self._scopes[id(scope)] = scope
            self._leases[id(scope)] = (message, now)
            tg.start_soon(self._process, message, scope)

    async def _let_slots_accumulate(self) -> None:
        # One claim per free slot costs a round trip per job; waiting a moment for a batch's
        # worth of slots makes each claim fetch a batch when jobs are short.
        target = min(self._batch, self._concurrency)
        if not self.in_flight or self._concurrency - self.in_flight >= target:
            return
        with anyio.move_on_after(_REFILL_WAIT):
            while self._concurrency - self.in_flight < target:
                await self._wait_for_change()

    async def _wait_for_change(self) -> None:
        if self._changed is None or self._changed.is_set():
            self._changed = anyio.Event()
        await self._changed.wait()

    async def _drain(self) -> None:
        logger.info("worker.draining", extra={"in_flight": self.in_flight})
        with anyio.move_on_after(self._grace):
            while self._scopes:
                await self._wait_for_change()
        for scope in list(self._scopes.values()):
            scope.cancel()

    async def _process(self, message: Message, scope: anyio.CancelScope) -> None:
        # Shielded so a shutdown lets the job finish; _drain cancels it after the grace.
        with scope:
            try:
                await self._settle(message)
            finally:
                del self._scopes[id(scope)]
                del self._leases[id(scope)]
                if self._changed is not None:
                    self._changed.set()

    async def _settle(self, message: Message) -> None:
        if message.attempts > self._max_attempts:
            reason = f"crashed: {message.attempts - 1} deliveries never finished"
            await self._dead_letter(message, reason)
            return
        try:
            with anyio.fail_after(self._job_timeout):
                await self._router.dispatch(message.job)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                logger.warning("job.cancelled", extra=_fields(message, delay=0.0))
                await self._safely(self._queue.nack, message, timedelta(0))
            raise
        except PermanentJobError as exc:
            await self._dead_letter(message, f"{type(exc).__name__}: {exc}")
        except Exception as exc:
            # RetryLater only replaces the backoff delay; it still counts toward max_attempts.
            if message.attempts >= self._max_attempts:
                await self._dead_letter(message, f"{type(exc).__name__}: {exc}")
            elif isinstance(exc, RetryLater):
                await self._retry(message, exc, exc.delay)
            else:
                await self._retry(message, exc, self._backoff(message.attempts))
        else:
            logger.info("job.done", extra=_fields(message))
            await self._safely(self._queue.ack, message)

    async def _heartbeat(self, scope: anyio.CancelScope) -> None:
        # One loop for all jobs (not a task per job): extends every lease older than half the
        # visibility timeout. Shielded so leases stay alive during the shutdown grace.
        half = self._visibility.total_seconds() / 2
        with scope:
            while True:
                await anyio.sleep(half / 2)
                now = anyio.current_time()
                for key, (message, since) in list(self._leases.items()):
                    if now - since >= half and key in self._leases:
                        self._leases[key] = (message, now)
                        logger.debug("job.lease_extended", extra=_fields(message))
                        await self._safely(self._queue.extend, message, self._visibility)

    async def _retry(self, message: Message, exc: Exception, delay: timedelta) -> None:
        fields = _fields(message, delay=delay.total_seconds(), error=f"{type(exc).__name__}: {exc}")
        logger.warning("job.retry", extra=fields)
        await self._safely(self._queue.nack, message, delay)

    async def _dead_letter(self, message: Message, reason: str) -> None:
        logger.error("job.dead_lettered", extra=_fields(message, error=reason))
        await self._safely(self._queue.dead_letter, message, reason)

    @staticmethod
    async def _safely(operation: Callable[..., Any], message: Message, *args: Any) -> None:
        # A failed ack/nack only delays the job: its lease expires and it is delivered again.
        try:
            await operation(message, *args)
        except Exception as exc:
            logger.error("queue.settle_failed", extra=_fields(message, error=repr(exc)))
