"""One shape for every queue adapter: what a composition root gets from entering a backend."""

from __future__ import annotations

from attrs import frozen

from skincare_core.jobs.ports import DeadLetters, JobSink, OutboxStorage, Queue, QueueStats


@frozen
class Backend:
    """A queue adapter as the engine and the operator use it.

    Each adapter package exports one async context manager yielding this value and closing its
    own connections on exit. `outbox` is the relay's storage, set only where a relay must run
    (a queue whose outbox rows live elsewhere); where the outbox row is the queue row it is None.
    `stats` counts the queue's jobs by state.
    """

    queue: Queue
    dead_letters: DeadLetters
    sink: JobSink
    outbox: OutboxStorage | None
    stats: QueueStats
