"""The worker: a fixed pool of runners in slots, fed by claims that follow the free slots."""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TypeVar

import anyio

from skincare_core.jobs.completer import Completer, SettleRetry
from skincare_core.jobs.definitions import Definitions
from skincare_core.jobs.executor import Executor
from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics, NoMetrics
from skincare_core.jobs.ports import Queue, Settlement
from skincare_core.jobs.rate_limit import Throttle
from skincare_core.jobs.retry import RetryPolicies, RetryRule, backoff_delay, receive_pause
from skincare_core.jobs.router import Router
from skincare_core.jobs.tracing import JobTracer
from skincare_core.log_context import bind_fields, unbind_fields

logger = logging.getLogger(__name__)
_ACK_LINGER = 0.005
_FULL_TICK = 5.0
_REFILL_WAIT = 0.005
_NEVER = float("inf")
# One clock read per job: time.monotonic is cheaper than anyio.current_time's backend lookup.
_now = time.monotonic


class Changes:
    """A wake-up for whoever waits until the worker's counts change; firing costs a check."""

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    def fire(self) -> None:
        """Wake every waiter."""
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        """Until the next `fire`."""
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


class Slot:
    """One running job: its runner's cancel scope, when it started, when its lease was last
    renewed, when its time is up, and whether the watchdog stopped it."""

    __slots__ = ("deadline", "message", "renewed", "scope", "started", "timed_out")

    def __init__(
        self, message: Message, scope: anyio.CancelScope, now: float, timeout: float
    ) -> None:
        self.message = message
        self.scope = scope
        self.started = self.renewed = now
        self.deadline = now + timeout
        self.timed_out = False


class Worker:
    """Runs jobs from a queue through a router until its cancel scope is cancelled.

    `concurrency` runners live as long as the worker, each in a slot, and take received
    messages from a deque: a job costs no task, timer, cancel scope or wait of its own. The
    worker keeps the one count of busy slots and claims as slots free up; an `Executor` runs
    each job and says what becomes of it, and a `Completer` settles it in batches while the
    runner goes on. One watchdog enforces job timeouts and one heartbeat keeps leases; a
    `throttle` may shrink or delay each claim. `max_attempts` and `backoff` are the retry
    rule of every job type `retry_policies` leaves out; `job_timeout` the timeout of every job
    type `job_timeouts` (job type -> timeout) leaves out. A settlement the queue cannot take
    (`Unavailable`) is retried while the job's lease holds, its slot taken meanwhile.

    `definitions` (typed job types, `JobDefinition`) are served beside `router`'s handlers
    (either may be left out, not both), and bring their retry policies and timeouts: a type
    given a policy or timeout both ways is a ValueError. `job_timeouts` are per-type timeouts
    (else `job_timeout`). Sync handlers run in threads, at most `sync_threads` at a time. A
    job may snooze (`Snooze`) `max_snoozes` times; the next snooze dead-letters it.
    """

    def __init__(
        self,
        *,
        queue: Queue,
        router: Router | None = None,
        definitions: Definitions | None = None,
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
        job_timeouts: Mapping[str, timedelta] | None = None,
        sync_threads: int = 8,
        max_snoozes: int = 25,
    ) -> None:
        if concurrency < 1 or max_attempts < 1 or receive_batch < 1 or sync_threads < 1:
            raise ValueError("concurrency, max_attempts, receive_batch, sync_threads must be >= 1")
        defined = Definitions() if definitions is None else definitions
        timeouts = _merged("timeout", job_timeouts, defined.timeouts)
        policies = _merged("retry policy", retry_policies, defined.retry_policies)
        # A zero visibility makes the heartbeat sleep 0 s: a busy loop extending every lease.
        shortest = min([job_timeout, *timeouts.values()])
        if visibility_timeout <= timedelta(0) or shortest <= timedelta(0):
            raise ValueError("visibility_timeout and every job timeout must be positive")
        self._queue = queue
        self._metrics = metrics or NoMetrics()
        self._executor = Executor(
            queue=queue.name,
            router=_router(router, defined, anyio.CapacityLimiter(sync_threads)),
            retry=RetryRule(max_attempts=max_attempts, backoff=backoff, policies=policies),
            job_timeout=job_timeout.total_seconds(),
            job_timeouts={t: d.total_seconds() for t, d in timeouts.items()},
            max_snoozes=max_snoozes,
            metrics=self._metrics,
            tracer=tracer,
        )
        lease = visibility_timeout.total_seconds()
        self._completer = Completer(
            queue,
            self._freed,
            # As many finished jobs as may wait before claims hold back: one ack per slot.
            batch=max(1, concurrency),
            linger=_ACK_LINGER,
            retry=SettleRetry(queue=queue.name, metrics=self._metrics, lease=lease),
        )
        self._concurrency = concurrency
        self._timeout_of = self._executor.timeout_of
        self._shortest_timeout = self._executor.shortest_timeout
        self._visibility = visibility_timeout
        self._grace = shutdown_grace.total_seconds()
        self._throttle = throttle
        self._pending: deque[Message] = deque()
        self._idle: deque[anyio.Event] = deque()
        self._slots: dict[int, Slot] = {}
        self._stopping = False
        self._changes = Changes()
        self._receive_failures = 0
        self._rng = random.Random()
        # Claims: how many slots each asks for, and what is being claimed now.
        self._batch = receive_batch
        self._target = min(receive_batch, concurrency)
        self._reserved = 0
        self._claiming = 0
        self._backlog = False
        self._wake_at = _NEVER
        self._duty = anyio.Lock()

    @property
    def in_flight(self) -> int:
        """Jobs received and not yet finished: running, or waiting for a runner.

        A finished job frees its slot at once; its settlement follows in the next batch. Up to
        `concurrency` finished jobs may wait for their settlement before claims hold back; one
        whose settlement is being retried holds a slot until it ends (`Completer.held`).
        """
        return len(self._slots) + len(self._pending)

    def _busy(self) -> int:
        """The busy slots: jobs in flight, and the settlements that hold a slot."""
        return self.in_flight + self._completer.held(self._concurrency)

    async def run(self) -> None:
        """Receive and run jobs; on cancellation stop receiving and drain within the grace."""
        async with anyio.create_task_group() as tg:
            # Shielded so a shutdown lets running jobs finish; _drain cancels it after the grace.
            pool = anyio.CancelScope(shield=True)
            tg.start_soon(self._run_pool, pool)
            tg.start_soon(self._report_full)
            try:
                await self._claim()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._drain(pool)
                raise

    async def _run_pool(self, scope: anyio.CancelScope) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._settle)
            try:
                with scope:
                    async with anyio.create_task_group() as pool:
                        pool.start_soon(self._keep_leases)
                        pool.start_soon(self._enforce_timeouts)
                        for runner in range(self._concurrency):
                            pool.start_soon(self._runner, runner)
            finally:
                # Every runner has handed its job over: what waits is settled once, then done.
                self._completer.close()

    async def _settle(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._completer.run()

    async def _report_full(self) -> None:
        # Busy, not stuck: while every slot is taken no claim runs, so a liveness check
        # sees the worker go round through this tick instead.
        while True:
            await anyio.sleep(_FULL_TICK)
            if self._busy() >= self._concurrency:
                self._metrics.received(self._queue.name, 0)

    # Claims follow the free slots, a fetch-ahead like graphile-worker's. Each claim asks for
    # the slots free at that moment (at most `receive_batch`). While claims come back full the
    # queue has a backlog: free slots are claimed at once, and another claim starts as soon as
    # a batch's worth of slots is free even if one is in flight, so the jobs claimed at once
    # grow with the concurrency. Otherwise one claim at a time, for a batch's worth of slots.

    async def _claim(self) -> None:
        """Forever: one claimer per batch of slots, taking turns to wait for room."""
        async with anyio.create_task_group() as tg:
            for _ in range(-(-self._concurrency // self._target)):
                tg.start_soon(self._claimer)

    async def _claimer(self) -> None:
        while True:
            async with self._duty:
                wanted = await self._room()
                self._reserved += wanted
                self._claiming += 1
            try:
                messages = await self._receive(wanted)
            finally:
                self._reserved -= wanted
                self._claiming -= 1
            self._backlog = len(messages) >= wanted
            self._deliver(messages)
            self._changes.fire()

    def _free(self) -> int:
        return self._concurrency - self._busy() - self._reserved

    def _may_claim(self) -> bool:
        if not self._claiming:
            return self._free() > 0
        return self._backlog and self._free() >= self._target

    async def _room(self) -> int:
        while not self._may_claim():
            wake_at = 1 if not self._claiming else self._target if self._backlog else _NEVER
            await self._wait_until_free(wake_at)
        if not (self._claiming or self._backlog) and self._busy() and self._free() < self._target:
            # Without a backlog a claim per freed slot would cost a round trip per job:
            # waiting a moment for a batch's worth of slots makes each claim fetch a batch.
            # With one, the free slots are claimed at once (fetch-ahead) while others run.
            with anyio.move_on_after(_REFILL_WAIT):
                while self._free() < self._target:
                    await self._wait_until_free(self._target)
        return min(self._batch, self._free())

    async def _wait_until_free(self, slots: float) -> None:
        # Frees wake this claimer only at `slots`, not per job; a returning claim always does.
        self._wake_at = slots
        try:
            await self._changes.wait()
        finally:
            self._wake_at = _NEVER

    def _freed(self) -> None:
        """Slots were freed: wake whoever waits for as many as are free now."""
        if self._stopping or (self._wake_at != _NEVER and self._free() >= self._wake_at):
            self._changes.fire()

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
                    await self._run_one(runner, message, scope)

    async def _run_one(self, runner: int, message: Message, scope: anyio.CancelScope) -> None:
        timeout = self._timeout_of(message.job.type)
        slot = self._slots[runner] = Slot(message, scope, _now(), timeout)
        # Every line logged while the job runs carries these.
        fields = bind_fields(
            job_id=message.job.id, type=message.job.type, attempts=message.attempts
        )
        settlement: Settlement | None = None
        try:
            settlement = await self._executor.run(message)
        except anyio.get_cancelled_exc_class():
            ran = _now() - slot.started
            settlement = self._executor.interrupted(message, timed_out=slot.timed_out, ran=ran)
            raise
        finally:
            unbind_fields(fields)
            del self._slots[runner]
            if settlement is not None:
                self._completer.add(settlement, slot.renewed)
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

    async def _keep_leases(self) -> None:
        """Forever: renew every lease older than half the visibility timeout.

        The leases due at one tick go in one call, so a queue can renew them in one request.
        """
        half = self._visibility.total_seconds() / 2
        while True:
            await anyio.sleep(half / 2)
            now = _now()
            due = [slot for slot in self._slots.values() if now - slot.renewed >= half]
            if due:
                renewed = [slot.renewed for slot in due]
                for slot in due:
                    slot.renewed = now
                logger.debug("job.leases_extended", extra={"count": len(due)})
                self._completer.extend([s.message for s in due], renewed, self._visibility)

    async def _enforce_timeouts(self) -> None:
        """Forever: cancel each job still running past its deadline (its type's timeout).

        One loop sleeping until the nearest deadline replaces a timer per job. It wakes at
        least every shortest timeout, so a job starting meanwhile is never overlooked.
        """
        while True:
            # The clock moves between the two reads: a deadline already past means no sleep.
            await anyio.sleep(max(0.0, self._next_deadline() - _now()))
            now = _now()
            for slot in list(self._slots.values()):
                if not slot.timed_out and now >= slot.deadline:
                    slot.timed_out = True
                    slot.scope.cancel()

    def _next_deadline(self) -> float:
        # Any job starting from now on has its deadline after this one.
        soonest = _now() + self._shortest_timeout
        for slot in self._slots.values():
            if not slot.timed_out and slot.deadline < soonest:
                soonest = slot.deadline
        return soonest

    async def _drain(self, pool: anyio.CancelScope) -> None:
        logger.info("worker.draining", extra={"in_flight": self.in_flight})
        self._stopping = True
        while self._idle:
            self._idle.popleft().set()
        with anyio.move_on_after(self._grace):
            while self.in_flight or len(self._completer):
                await self._changes.wait()
        # The settlements of the jobs cancelled now must not retry past the grace either.
        self._completer.stop()
        pool.cancel()


V = TypeVar("V")


def _merged(
    what: str, given: Mapping[str, V] | None, defined: Mapping[str, V] | None
) -> dict[str, V]:
    """Per-type options given to the worker and those its definitions bring; a type in both
    is a ValueError: one place says it."""
    given, defined = given or {}, defined or {}
    both = sorted(given.keys() & defined.keys())
    if both:
        raise ValueError(f"a {what} given to the worker and by a definition: {', '.join(both)}")
    return {**given, **defined}


def _router(
    router: Router | None, definitions: Definitions, threads: anyio.CapacityLimiter
) -> Router:
    """`router`'s handlers and the definitions' (sync ones in threads of `threads`)."""
    if not definitions:
        if router is None:
            raise ValueError("a worker needs a router or definitions")
        return router
    return definitions.router(threads, into=None if router is None else router.copy())
