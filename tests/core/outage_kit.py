"""A queue whose settlements fail as `Unavailable` while an outage lasts, and a fake clock to
run one on, for the settle retry tests."""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

import anyio
import anyio.lowlevel

from skincare_core.jobs.completer import SettleRetry
from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.metrics import NoMetrics
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.testing.jobs import InMemoryQueue


class QueueDown(Unavailable):
    """The queue's backend is unreachable."""


class OutageQueue(InMemoryQueue):
    """An InMemoryQueue whose ack_many, retry_many and dead_letter_many raise `QueueDown` while
    `down()` holds (or `error` whenever it is set), noting the clock and the jobs of every try
    in `tries`."""

    def __init__(
        self,
        down: Callable[[], bool],
        *,
        clock: Callable[[], float] = time.monotonic,
        **options: object,
    ) -> None:
        super().__init__(monotonic=clock, **options)  # type: ignore[arg-type]
        self.down = down
        self.error: Exception | None = None
        self.tries: list[tuple[float, int]] = []
        self._clock = clock

    async def ack_many(self, messages: Sequence[Message]) -> None:
        self._try(len(messages))
        await super().ack_many(messages)

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        self._try(len(retries))
        await super().retry_many(retries)

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        self._try(len(burials))
        await super().dead_letter_many(burials)

    def _try(self, jobs: int) -> None:
        self.tries.append((self._clock(), jobs))
        if self.error is not None:
            raise self.error
        if self.down():
            raise QueueDown("connection refused")


class Outage:
    """An outage on the monotonic clock: `start(seconds)` from now; `__call__` says if it lasts."""

    def __init__(self) -> None:
        self.until = 0.0

    def start(self, seconds: float) -> None:
        """Down for `seconds` from now."""
        self.until = time.monotonic() + seconds

    def end(self) -> None:
        """Up again now."""
        self.until = 0.0

    def __call__(self) -> bool:
        return time.monotonic() < self.until


class FakeTime:
    """A monotonic clock that moves only when the retry sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await anyio.lowlevel.checkpoint()


def _operation(kind: str, queue: OutageQueue) -> Callable[[Sequence[Message]], Awaitable[None]]:
    if kind == "ack":
        return queue.ack_many
    if kind == "nack":
        return lambda messages: queue.retry_many([Retry(m, timedelta(0)) for m in messages])
    return lambda messages: queue.dead_letter_many([Burial(m, "boom") for m in messages])


class Scenario:
    """One leased job on an OutageQueue down for `outage` seconds from 0, settled by `kind`."""

    def __init__(self, kind: str, lease: float, outage: float, seed: int) -> None:
        self.time = FakeTime()
        self.lease, self.outage = lease, outage
        self.queue = OutageQueue(
            lambda: self.time.now < outage,
            clock=self.time,
            visibility_timeout=timedelta(seconds=lease),
            wait=timedelta(0),
        )
        self.retry = SettleRetry(
            queue="default",
            metrics=NoMetrics(),
            lease=lease,
            clock=self.time,
            sleep=self.time.sleep,
            rng=random.Random(seed),
        )
        self.kind = kind

    async def settle(self) -> bool:
        """Enqueue, receive at 0 and settle the job: whether it went through."""
        await enqueue_job(self.queue, new_job("noop"))
        [message] = await self.queue.receive()
        operation = _operation(self.kind, self.queue)
        return await self.retry.settle(operation, [self.retry.leased(message, 0.0)])

    @property
    def times(self) -> list[float]:
        """When each try ran."""
        return [at for at, _ in self.queue.tries]
