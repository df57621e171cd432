"""The in-memory unit of work's outbox writer: envelopes held until commit, then sent to their
queue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from skincare_core.jobs.envelope import Envelope
from skincare_core.testing.shop.memory_state import Transaction


class OutboxSink(Protocol):
    """Where committed outbox jobs go: `InMemoryQueue` or `InMemoryQueues`."""

    def unique_key_taken(self, key: str) -> bool:
        """Whether a live job holds `key`."""

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Enqueue the envelopes; how many were added."""


class MemoryOutboxWriter:
    """The `OutboxWriter` of an in-memory unit of work: holds envelopes until it commits.

    The envelope is trusted (`RoutedOutbox` built it); only the unique key is this writer's to
    check, against the live jobs and the envelopes written earlier in the transaction.
    """

    def __init__(self, uow: Transaction, sink: OutboxSink) -> None:
        self._uow = uow
        self._sink = sink

    async def write(self, envelope: Envelope) -> bool:
        """Hold `envelope` until commit; False, holding nothing, while its key is taken."""
        key = envelope.unique_key
        if key is not None and self._key_taken(key):
            return False
        self._uow.pending_jobs.append(envelope)
        return True

    def _key_taken(self, key: str) -> bool:
        pending = any(e.unique_key == key for e in self._uow.pending_jobs)
        return pending or self._sink.unique_key_taken(key)
