"""Batched acks: runners hand finished jobs over and go on; one task acks them together."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio

from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import JobMetrics
from skincare_core.jobs.ports import Queue
from skincare_core.jobs.settle import job_fields

logger = logging.getLogger("skincare_core.jobs.worker")


class Completer:
    """River's batch completer: finished jobs wait here and one task acks them together.

    A runner's hand-over costs an append, not a wait for the database. A batch goes out once
    `batch` jobs wait or `linger` seconds after the first (River waits up to 50 ms; a short
    linger keeps leases short), one `ack_many` at a time; `len` counts the jobs not yet acked.
    """

    def __init__(
        self,
        queue: Queue,
        settled: Callable[[], None],
        *,
        batch: int,
        linger: float,
        metrics: JobMetrics,
    ) -> None:
        self._queue = queue
        self._metrics = metrics
        self._settled = settled
        self._batch = batch
        self._linger = linger
        self._done: list[Message] = []
        self._flushing = 0
        self._wake: anyio.Event | None = None
        self._wake_at = 1

    def __len__(self) -> int:
        return len(self._done) + self._flushing

    def add(self, message: Message) -> None:
        """Ack `message` with the next batch."""
        self._done.append(message)
        if self._wake is not None and len(self._done) >= self._wake_at:
            self._wake.set()
            self._wake = None

    async def run(self) -> None:
        """Forever: ack what finished, one batch at a time."""
        while True:
            await self._until_waiting(1)
            if len(self._done) < self._batch:
                with anyio.move_on_after(self._linger):
                    await self._until_waiting(self._batch)
            batch, self._done = self._done, []
            self._flushing = len(batch)
            try:
                await self._queue.ack_many(batch)
            except Exception as exc:
                # The jobs stay leased and come back when their leases expire.
                for message in batch:
                    self._metrics.settle_failed(self._queue.name)
                    logger.error("queue.settle_failed", extra=job_fields(message, error=repr(exc)))
            finally:
                self._flushing = 0
                self._settled()

    async def _until_waiting(self, count: int) -> None:
        if len(self._done) < count:
            self._wake, self._wake_at = anyio.Event(), count
            await self._wake.wait()
