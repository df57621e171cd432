"""Batched acks: runners hand finished jobs over and go on; one task acks them together."""

from __future__ import annotations

from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import Message
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.settle_retry import Leased, SettleRetry


class Completer:
    """River's batch completer: finished jobs wait here and one task acks them together.

    A runner's hand-over costs an append, not a wait for the database. A batch goes out once
    `batch` jobs wait or `linger` seconds after the first (River waits up to 50 ms; a short
    linger keeps leases short), one `ack_many` at a time; `len` counts the jobs not yet acked.
    A batch the queue could not take (`Unavailable`) is retried by `retry` in a task of its own,
    so the batches after it go out meanwhile; its jobs are `retrying` until it ends.
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
        # Two lists, not a pair per job: the hand-over is on every job's path.
        self._done: list[Message] = []
        self._renewed: list[float] = []
        self._flushing = 0
        self._retrying = 0
        self._wake: anyio.Event | None = None
        self._wake_at = 1

    def __len__(self) -> int:
        return len(self._done) + self._flushing + self._retrying

    def held(self, slots: int) -> int:
        """The worker's slots its finished jobs hold: every one whose ack is being retried
        (so claims stop while acks fail) and those waiting for a batch beyond `slots`."""
        return self._retrying + max(0, len(self._done) + self._flushing - slots)

    def add(self, message: Message, renewed: float) -> None:
        """Ack `message` (its lease taken or last renewed at `renewed`) with the next batch."""
        self._done.append(message)
        self._renewed.append(renewed)
        if self._wake is not None and len(self._done) >= self._wake_at:
            self._wake.set()
            self._wake = None

    async def run(self) -> None:
        """Forever: ack what finished, one batch at a time."""
        async with anyio.create_task_group() as retries:
            while True:
                await self._until_waiting(1)
                if len(self._done) < self._batch:
                    with anyio.move_on_after(self._linger):
                        await self._until_waiting(self._batch)
                batch, renewed, self._done, self._renewed = self._done, self._renewed, [], []
                self._flushing = len(batch)
                try:
                    await self._flush(batch, renewed, retries)
                finally:
                    self._flushing = 0
                    self._settled()

    async def _flush(self, batch: list[Message], renewed: list[float], retries: TaskGroup) -> None:
        try:
            await self._queue.ack_many(batch)
        except Exception as error:
            leased = [self._retry.leased(m, at) for m, at in zip(batch, renewed, strict=True)]
            if not isinstance(error, Unavailable):
                self._retry.failed(leased, error, "not retried")
                return
            self._retrying += len(batch)
            retries.start_soon(self._retry_batch, leased, error)

    async def _retry_batch(self, batch: list[Leased], error: Exception) -> None:
        try:
            await self._retry.retry(self._queue.ack_many, batch, error)
        finally:
            self._retrying -= len(batch)
            self._settled()

    async def _until_waiting(self, count: int) -> None:
        if len(self._done) < count:
            self._wake, self._wake_at = anyio.Event(), count
            await self._wake.wait()
