"""The worker engine: a fixed pool of runners fed by batched receives, leases, graceful stop."""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Callable
from datetime import timedelta

import anyio

from skincare_core.jobs.backoff import backoff_delay, receive_pause
from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics, NoMetrics
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.rate_limit import Throttle
from skincare_core.jobs.retry import RetryPolicies
from skincare_core.jobs.router import Router
from skincare_core.jobs.settle import Settler
from skincare_core.jobs.slots import Slots
from skincare_core.jobs.tracing import JobTracer
from skincare_core.log_context import bind_fields, unbind_fields

logger = logging.getLogger(__name__)
_REFILL_WAIT = 0.005
_FULL_TICK = 5.0


class Worker:
    """Runs jobs from a queue through a router until its cancel scope is cancelled.

    `concurrency` runner tasks live as long as the worker and take received messages from a
    deque: a job costs no task, timer or cancel scope of its own (profiling showed those were
    most of the engine's cost per job). One watchdog enforces job timeouts, one loop keeps leases.
    `max_attempts` and `backoff` are the retry rule of every job type `retry_policies` leaves out.
    """

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
        retry_policies: RetryPolicies | None = None,
        metrics: JobMetrics | None = None,
        tracer: JobTracer | None = None,
        throttle: Throttle | None = None,
    ) -> None:
        if concurrency < 1 or max_attempts < 1 or receive_batch < 1:
            raise ValueError("concurrency, max_attempts and receive_batch must be >= 1")
        # A zero visibility makes the heartbeat sleep 0 s: a busy loop extending every lease.
        if visibility_timeout <= timedelta(0) or job_timeout <= timedelta(0):
            raise ValueError("visibility_timeout and job_timeout must be positive")
        self._queue = queue
        self._metrics = metrics or NoMetrics()
        self._settler = Settler(
            queue=queue,
            router=router,
            max_attempts=max_attempts,
            job_timeout=job_timeout.total_seconds(),
            backoff=backoff,
            policies=retry_policies or {},
            metrics=self._metrics,
            tracer=tracer,
        )
        self._concurrency = concurrency
        self._job_timeout = job_timeout.total_seconds()
        self._visibility = visibility_timeout
        self._grace = shutdown_grace.total_seconds()
        self._batch = receive_batch
        self._throttle = throttle
        self._pending: deque[Message] = deque()
        self._slots = Slots()
        self._stopping = False
        self._work = anyio.Event()
        self._changed: anyio.Event | None = None
        self._receive_failures = 0
        self._rng = random.Random()

    @property
    def in_flight(self) -> int:
        """Jobs received and not yet settled."""
        return len(self._slots) + len(self._pending)

    async def run(self) -> None:
        """Receive and run jobs; on cancellation stop receiving and drain within the grace."""
        async with anyio.create_task_group() as tg:
            # Shielded so a shutdown lets running jobs finish; _drain cancels it after the grace.
            pool = anyio.CancelScope(shield=True)
            tg.start_soon(self._run_pool, pool)
            try:
                while True:
                    await self._receive()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._drain(pool)
                raise

    async def _run_pool(self, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as pool:
                pool.start_soon(self._slots.keep_leases, self._visibility, self._extend)
                pool.start_soon(self._slots.enforce, self._job_timeout)
                for runner in range(self._concurrency):
                    pool.start_soon(self._runner, runner)

    async def _receive(self) -> None:
        while self.in_flight >= self._concurrency:
            with anyio.move_on_after(_FULL_TICK):
                await self._wait_for_change()
            # Busy, not stuck: a liveness check sees the loop go round while every slot is taken.
            self._metrics.received(self._queue.name, 0)
        await self._let_slots_accumulate()
        wanted = min(self._concurrency - self.in_flight, self._batch)
        try:
            if self._throttle is not None:
                wanted = await self._throttle.take(wanted)
            messages = await self._queue.receive(wanted)
        except Exception as exc:
            failures = self._receive_failures = self._receive_failures + 1
            self._metrics.receive_failed(self._queue.name)
            logger.error("queue.receive_failed", extra={"error": repr(exc), "failures": failures})
            await anyio.sleep(receive_pause(failures - 1, self._rng))
            return
        self._receive_failures = 0
        self._metrics.received(self._queue.name, len(messages))
        if messages:
            self._pending.extend(messages)
            self._work.set()

    async def _let_slots_accumulate(self) -> None:
        # One claim per free slot costs a round trip per job; waiting a moment for a batch's
        # worth of slots makes each claim fetch a batch when jobs are short.
        target = min(self._batch, self._concurrency)
        if not self.in_flight or self._concurrency - self.in_flight >= target:
            return
        with anyio.move_on_after(_REFILL_WAIT):
            while self._concurrency - self.in_flight < target:
                await self._wait_for_change()

    async def _runner(self, runner: int) -> None:
        # A timed-out job cancels only its runner's scope; the runner goes on in a fresh one.
        while not self._stopping or self._pending:
            with anyio.CancelScope() as scope:
                while (message := await self._next()) is not None:
                    slot = self._slots.start(runner, message, scope)
                    # Every line logged while the job runs and settles carries these.
                    fields = bind_fields(
                        job_id=message.job.id, type=message.job.type, attempts=message.attempts
                    )
                    try:
                        await self._settler.run(slot)
                    finally:
                        unbind_fields(fields)
                        self._slots.finish(runner)
                        self._announce_change()

    async def _next(self) -> Message | None:
        while not self._pending:
            if self._stopping:
                return None
            if self._work.is_set():
                self._work = anyio.Event()
            await self._work.wait()
        return self._pending.popleft()

    async def _extend(self, message: Message, visibility: timedelta) -> None:
        await self._settler.safely(self._queue.extend, message, visibility)

    def _announce_change(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _wait_for_change(self) -> None:
        if self._changed is None or self._changed.is_set():
            self._changed = anyio.Event()
        await self._changed.wait()

    async def _drain(self, pool: anyio.CancelScope) -> None:
        logger.info("worker.draining", extra={"in_flight": self.in_flight})
        self._stopping = True
        self._work.set()
        with anyio.move_on_after(self._grace):
            while self.in_flight:
                await self._wait_for_change()
        pool.cancel()
