"""The in-memory unit of work's outbox: jobs held until commit, then sent to their queue."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from skincare_core.jobs.codec import encode_job
from skincare_core.jobs.envelope import Envelope, check_unique_key, due_at
from skincare_core.jobs.job import Job
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.testing.shop.memory_state import Transaction


class OutboxSink(Protocol):
    """Where committed outbox jobs go: `InMemoryQueue` or `InMemoryQueues`."""

    def unique_key_taken(self, key: str) -> bool:
        """Whether a live job holds `key`."""

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Enqueue the envelopes; how many were added."""


class MemoryOutbox:
    """Jobs sent to their routed queue when the unit of work commits."""

    def __init__(self, uow: Transaction, routes: QueueRoutes, sink: OutboxSink) -> None:
        self._uow = uow
        self._routes = routes
        self._sink = sink

    async def add(
        self,
        job: Job,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
    ) -> bool:
        """Hold the job until commit; JobTooLarge and ValueError at once, as the real outbox.

        False, adding nothing, while a live job (or one added in this transaction) holds the key.
        """
        encode_job(job)
        check_unique_key(unique_key)
        due = due_at(delay=delay, not_before=not_before, now=datetime.now(UTC))
        if unique_key is not None and self._key_taken(unique_key):
            return False
        queue = self._routes.queue_of(job.type)
        self._uow.pending_jobs.append(Envelope(job, queue, due, unique_key))
        return True

    def _key_taken(self, key: str) -> bool:
        pending = any(e.unique_key == key for e in self._uow.pending_jobs)
        return pending or self._sink.unique_key_taken(key)
