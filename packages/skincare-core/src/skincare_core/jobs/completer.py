"""Settlement: the one place a job's outcome reaches the queue, in batches, retried through a
short outage while the job's lease holds."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from functools import partial
from typing import Generic, TypeVar

import anyio
from anyio.abc import TaskGroup
from attrs import frozen

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Message, job_fields
from skincare_core.jobs.metrics import JobMetrics
from skincare_core.jobs.ports import Burial, Queue, Retry, Settlement
from skincare_core.jobs.retry import jittered_pause

logger = logging.getLogger("skincare_core.jobs.worker")
SETTLE_PAUSE_FIRST = 0.05
SETTLE_PAUSE_CAP = 2.0
S = TypeVar("S", Message, Retry, Burial)
Settle = Callable[[Sequence[S]], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]


@frozen
class Leased(Generic[S]):
    """A settlement to make, and when its job's lease ends (on the `SettleRetry`'s clock)."""

    settlement: S
    until: float

    @property
    def message(self) -> Message:
        """The job's message."""
        item = self.settlement
        return item if isinstance(item, Message) else item.message


class Completer:
    """River's batch completer, for every settlement: runners hand their jobs' outcomes over
    and go on; one task settles them together.

    A hand-over costs an append, not a wait for the queue. A batch goes out once `batch`
    settlements wait or `linger` seconds after the first (a short linger keeps leases short):
    one `ack_many`, `retry_many` and `dead_letter_many` each, for the kinds it holds. A call the
    queue could not take (`Unavailable`) is retried by `retry` in a task of its own, so the
    batches after it go out meanwhile. Lease renewals (`extend`) go through the same rule.
    `settled` is called whenever settlements end, for the worker to claim into the slots
    they held; `len` counts those not yet settled. `close` settles what waits, once, and ends
    `run`.
    """

    def __init__(
        self,
        queue: Queue,
        settled: Callable[[], None],
        *,
        batch: int,
        linger: float,
        retry: SettleRetry,
    ) -> None:
        self._queue = queue
        self._settled = settled
        self._batch = batch
        self._linger = linger
        self._retry = retry
        # Two lists, not a pair per job: the ack hand-over is on every job's path.
        self._acks: list[Message] = []
        self._renewed: list[float] = []
        self._retries: list[Leased[Retry]] = []
        self._burials: list[Leased[Burial]] = []
        self._flushing = 0
        self._retrying = 0
        self._closed = False
        self._tasks: TaskGroup | None = None
        # Renewals asked for before `run` started its task group.
        self._renewals: list[tuple[list[Leased[Message]], timedelta]] = []
        self._wake: anyio.Event | None = None
        self._wake_at = 1

    def __len__(self) -> int:
        return self._waiting() + self._flushing + self._retrying

    def held(self, slots: int) -> int:
        """The worker's slots its settlements hold: every one being retried (so claims stop
        while settlements fail) and those waiting for a batch beyond `slots`."""
        return self._retrying + max(0, self._waiting() + self._flushing - slots)

    def add(self, settlement: Settlement, renewed: float) -> None:
        """Settle a job (its lease taken or last renewed at `renewed`) with the next batch."""
        if isinstance(settlement, Message):
            self._acks.append(settlement)
            self._renewed.append(renewed)
        elif isinstance(settlement, Retry):
            self._retries.append(self._retry.leased(settlement, renewed))
        else:
            self._burials.append(self._retry.leased(settlement, renewed))
        if self._wake is not None and self._waiting() >= self._wake_at:
            self._wake.set()
            self._wake = None

    def extend(
        self, messages: Sequence[Message], renewed: Sequence[float], visibility: timedelta
    ) -> None:
        """Renew these leases (each taken or last renewed at `renewed`) for `visibility`, in
        a task: the caller does not wait, and a renewal is retried like any settlement."""
        leased = [self._retry.leased(m, at) for m, at in zip(messages, renewed, strict=True)]
        if self._tasks is None:
            self._renewals.append((leased, visibility))
        else:
            self._tasks.start_soon(self._extend, leased, visibility)

    def stop(self) -> None:
        """Give up every settlement being retried, and retry none from now on."""
        self._retry.stop()

    def close(self) -> None:
        """Settle what waits once, without retries, and end `run`."""
        self.stop()
        self._closed = True
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    async def run(self) -> None:
        """Until `close`: settle what was handed over, one batch at a time."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            for leased, visibility in self._renewals:
                tasks.start_soon(self._extend, leased, visibility)
            while not self._closed or self._waiting():
                await self._until_waiting(1)
                if not self._closed and self._waiting() < self._batch:
                    with anyio.move_on_after(self._linger):
                        await self._until_waiting(self._batch)
                await self._flush()

    async def _flush(self) -> None:
        acks, renewed, retries, burials = self._acks, self._renewed, self._retries, self._burials
        self._acks, self._renewed, self._retries, self._burials = [], [], [], []
        self._flushing = len(acks) + len(retries) + len(burials)
        try:
            if acks:
                await self._send(self._queue.ack_many, acks, partial(self._leased, acks, renewed))
            if retries:
                await self._send(self._queue.retry_many, _items(retries), lambda: retries)
            if burials:
                await self._send(self._queue.dead_letter_many, _items(burials), lambda: burials)
        finally:
            self._flushing = 0
            self._settled()

    async def _send(
        self, operation: Settle[S], batch: list[S], leased: Callable[[], list[Leased[S]]]
    ) -> None:
        try:
            await operation(batch)
        except Exception as error:
            if not isinstance(error, Unavailable):
                self._retry.failed(leased(), error, "not retried")
                return
            self._retrying += len(batch)
            self._running().start_soon(self._retry_batch, operation, leased(), error)

    async def _retry_batch(
        self, operation: Settle[S], batch: list[Leased[S]], error: Exception
    ) -> None:
        try:
            await self._retry.retry(operation, batch, error)
        finally:
            self._retrying -= len(batch)
            self._settled()

    async def _extend(self, leased: list[Leased[Message]], visibility: timedelta) -> None:
        async def extend_many(messages: Sequence[Message]) -> None:
            await self._queue.extend_many(messages, visibility)

        await self._retry.settle(extend_many, leased)

    def _leased(self, acks: list[Message], renewed: list[float]) -> list[Leased[Message]]:
        return [self._retry.leased(m, at) for m, at in zip(acks, renewed, strict=True)]

    def _running(self) -> TaskGroup:
        if self._tasks is None:
            raise RuntimeError("the completer is not running")
        return self._tasks

    def _waiting(self) -> int:
        return len(self._acks) + len(self._retries) + len(self._burials)

    async def _until_waiting(self, count: int) -> None:
        if self._waiting() < count and not self._closed:
            self._wake, self._wake_at = anyio.Event(), count
            await self._wake.wait()


def _items(batch: list[Leased[S]]) -> list[S]:
    return [p.settlement for p in batch]


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

    def leased(self, settlement: S, renewed: float) -> Leased[S]:
        """`settlement`, whose job's lease was taken or last renewed at `renewed` (on the clock).

        The worker passes its job's start or last heartbeat: the claim took the lease a moment
        before, so a last try may come after the lease by that moment, and change nothing.
        """
        return Leased(settlement, renewed + self._lease)

    def stop(self) -> None:
        """Give up every pending retry now; each is logged, none is tried again."""
        self._stopped = True
        if self._stop is not None:
            self._stop.set()

    async def settle(self, operation: Settle[S], pending: Sequence[Leased[S]]) -> bool:
        """Run `operation` on the settlements, then `retry` it if it raised `Unavailable`;
        whether it went through for every one of them."""
        try:
            await operation([p.settlement for p in pending])
        except Unavailable as error:
            return await self.retry(operation, pending, error)
        except Exception as error:
            self.failed(pending, error, "not retried")
            return False
        return True

    async def retry(
        self, operation: Settle[S], pending: Sequence[Leased[S]], error: Exception
    ) -> bool:
        """After `operation` raised `error` (`Unavailable`) on `pending`: run it again on the
        settlements whose lease holds, pausing between tries, until it goes through or none
        is left."""
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

    def failed(self, pending: Sequence[Leased[S]], error: Exception, reason: str) -> None:
        """Count and log a settlement given up at its first failure."""
        for _ in pending:
            self._metrics.settle_failed(self._queue)
        self._give_up(pending, error, reason)

    def _pause(self, failures: int) -> float:
        return jittered_pause(
            failures - 1, self._rng, first=SETTLE_PAUSE_FIRST, cap=SETTLE_PAUSE_CAP
        )

    def _note(self, pending: Sequence[Leased[S]], error: Exception) -> None:
        for _ in pending:
            self._metrics.settle_failed(self._queue)
        _log_each(logging.WARNING, "queue.settle_retrying", pending, error=repr(error))

    def _holding(self, live: list[Leased[S]], at: float, error: Exception) -> list[Leased[S]]:
        over = [p for p in live if p.until <= at]
        self._give_up(over, error, "lease over")
        return [p for p in live if p.until > at]

    async def _paused(self, pause: float, live: list[Leased[S]], error: Exception) -> bool:
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
    def _give_up(pending: Sequence[Leased[S]], error: Exception, reason: str) -> None:
        # The job stays leased and comes back when its lease expires.
        _log_each(logging.ERROR, "queue.settle_failed", pending, error=repr(error), reason=reason)


async def _attempt(operation: Settle[S], live: list[Leased[S]]) -> Exception | None:
    try:
        await operation([p.settlement for p in live])
    except Exception as error:
        return error
    return None


def _log_each(level: int, event: str, pending: Sequence[Leased[S]], **fields: object) -> None:
    if logger.isEnabledFor(level):
        for p in pending:
            logger.log(level, event, extra=job_fields(p.message, **fields))
