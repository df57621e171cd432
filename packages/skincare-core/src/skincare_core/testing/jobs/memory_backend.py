"""`memory_backend`: the in-memory queue in the backend shape every queue adapter yields."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import OutboxStorage
from skincare_core.testing.jobs.memory_queue import InMemoryQueue


@asynccontextmanager
async def memory_backend(
    queue: InMemoryQueue | None = None, *, outbox: OutboxStorage | None = None
) -> AsyncIterator[Backend]:
    """`queue` (a fresh `InMemoryQueue` if None) as queue, dead letters, sink and stats.

    Pass `outbox` to have a relay forward from it, as with a queue whose outbox lives elsewhere.
    Keep a reference to `queue` to inspect it (`depth`, `jobs()`); nothing needs closing.
    """
    queue = InMemoryQueue() if queue is None else queue
    yield Backend(queue=queue, dead_letters=queue, sink=queue, outbox=outbox, stats=queue)
