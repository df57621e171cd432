"""The worker engine: a fixed pool of runners fed by claims that follow the free slots."""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Callable
from datetime import timedelta

import anyio

from skincare_core.jobs.backoff import backoff_delay, receive_pause
from skincare_core.jobs.completer import Completer
from skincare_core.jobs.intake import Changes, Intake
from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics, NoMetrics
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.rate_limit import Throttle
from skincare_core.jobs.retry import RetryPolicies
from skincare_core.jobs.router import Router
from skincare_core.jobs.settle import Settler
from skincare_core.jobs.settle_retry import SettleRetry
from skincare_core.jobs.slots import Slots
from skincare_core.jobs.tracing import JobTracer
from skincare_core.log_context import bind_fields, unbind_fields

logger = logging.getLogger(__name__)
_ACK_LINGER = 0.005
_FULL_TICK = 5.0


class Worker:
    """Runs jobs from a queue through a router until its cancel scope is cancelled.

    `concurrency` runner tasks live as long as the worker and take received messages from a
    deque: a job costs no task, timer, cancel scope or wait of its own. Claims follow the free
    slots (`Intake`), finished jobs are acked in batches (`Completer`), one watchdog enforces job
    timeouts and one loop keeps leases; a `throttle` may shrink or delay each claim. `max_attempts`
    and `backoff` are the retry rule of every job type `retry_policies` leaves out. A settlement
    the queue cannot take (`Unavailable`) is retried while the job's lease holds (`SettleRetry`),
    its slot taken meanwhile.
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
        self._retry = SettleRetry(
            queue=queue.name, metrics=self._metrics, lease=visibility_timeout.total_seconds()
        )
        self._settler = Settler(
            queue=queue,
            router=router,
            max_attempts=max_attempts,
            job_timeout=job_timeout.total_seconds(),
            backoff=backoff,
            policies=retry_policies or {},
            metrics=self._metrics,
            tracer=tracer,
            retry=self._retry,
        )
        self._concurrency = concurrency
        self._job_timeout = job_timeout.total_seconds()
        self._visibility = visibility_timeout
        self._grace = shutdown_grace.total_seconds()
        self._throttle = throttle
        self._pending: deque[Message] = deque()
        self._idle: deque[anyio.Event] = deque()
        self._slots = Slots()
        self._stopping = False
        self._receive_failures = 0
        self._rng = random.Random()
        self._changes = Changes()
        self._completer = Completer(
            queue,
            self._freed,
            # As many as may wait before claims hold back: half that cost 12 % more server
            # CPU at batch 10 (an ack statement per 10 jobs; docs/performance.md section 8).
            batch=max(1, concurrency),
            linger=_ACK_LINGER,
            retry=self._retry,
        )
        self._intake = Intake(
            receive=self._receive,
            deliver=self._deliver,
            busy=self._busy,
            changes=self._changes,
            concurrency=concurrency,
            batch=receive_batch,
        )

    @property
    def in_flight(self) -> int:
        """Jobs received and not yet finished: running, or waiting for a runner.

        A finished job frees its slot at once; its ack follows in the next batch. Up to
        `concurrency` finished jobs may wait for their ack before claims hold back; one whose
        ack is being retried holds a slot until it ends (`Completer.held`).
        """
        return len(self._slots) + len(self._pending)

    def _busy(self) -> int:
        return self.in_flight + self._completer.held(self._concurrency)

    async def run(self) -> None:
        """Receive and run jobs; on cancellation stop receiving and drain within the grace."""
        async with anyio.create_task_group() as tg:
            # Shielded so a shutdown lets running jobs finish; _drain cancels it after the grace.
            pool = anyio.CancelScope(shield=True)
            tg.start_soon(self._run_pool, pool)
            tg.start_soon(self._report_full)
            try:
                await self._intake.run()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._drain(pool)
                raise

    async def _run_pool(self, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as pool:
                pool.start_soon(self._slots.keep_leases, self._visibility, self._settler.extend)
                pool.start_soon(self._slots.enforce, self._job_timeout)
                pool.start_soon(self._completer.run)
                for runner in range(self._concurrency):
                    pool.start_soon(self._runner, runner)

    async def _report_full(self) -> None:
        # Busy, not stuck: while every slot is taken no claim runs, so a liveness check
        # sees the worker go round through this tick instead.
        while True:
            await anyio.sleep(_FULL_TICK)
            if self._busy() >= self._concurrency:
                self._metrics.received(self._queue.name, 0)

    async def _receive(self, wanted: int) -> list[Message]:
        try:
            if self._throttle is not None:
                wanted = await self._throttle.take(wanted)
            messages = await self._queue.receive(wanted)
        except Exception as exc:
            failures = self._receive_failures = self._receive_failures + 1
            self._metrics.receive_failed(self._queue.name)
            logger.error("queue.receive_failed", extra={"error": repr(exc), "failures": failures})
            await anyio.sleep(receive_pause(failures - 1, self._rng))
            return []
        self._receive_failures = 0
        self._metrics.received(self._queue.name, len(messages))
        return messages

    def _deliver(self, messages: list[Message]) -> None:
        self._pending.extend(messages)
        if messages and self._idle:
            self._idle.popleft().set()

    async def _runner(self, runner: int) -> None:
        # A timed-out job cancels only its runner's scope; the runner goes on in a fresh one.
        pending = self._pending
        while not self._stopping or pending:
            with anyio.CancelScope() as scope:
                while (message := pending.popleft() if pending else await self._park()) is not None:
                    slot = self._slots.start(runner, message, scope)
                    # Every line logged while the job runs and settles carries these.
                    fields = bind_fields(
                        job_id=message.job.id, type=message.job.type, attempts=message.attempts
                    )
                    succeeded = False
                    try:
                        succeeded = await self._settler.run(slot)
                    finally:
                        unbind_fields(fields)
                        self._slots.finish(runner)
                        if succeeded:
                            self._completer.add(message, slot.renewed)
                        self._freed()

    async def _park(self) -> Message | None:
        """Wait for a message; the runner woken wakes the next one if more are waiting."""
        while not self._pending:
            if self._stopping:
                return None
            event = anyio.Event()
            self._idle.append(event)
            try:
                await event.wait()
            finally:
                if not event.is_set():
                    self._idle.remove(event)
        message = self._pending.popleft()
        if self._pending and self._idle:
            self._idle.popleft().set()
        return message

    def _freed(self) -> None:
        if self._stopping:
            self._changes.fire()
        else:
            self._intake.freed()

    async def _drain(self, pool: anyio.CancelScope) -> None:
        logger.info("worker.draining", extra={"in_flight": self.in_flight})
        self._stopping = True
        while self._idle:
            self._idle.popleft().set()
        with anyio.move_on_after(self._grace):
            while self.in_flight or len(self._completer):
                await self._changes.wait()
        # Shielded nacks of the jobs cancelled now must not retry past the grace either.
        self._retry.stop()
        pool.cancel()
