"""One shape for every queue adapter: what a composition root gets from entering a backend."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from attrs import field, frozen

from skincare_core.jobs.history import JobHistory
from skincare_core.jobs.minutes import MinuteStore
from skincare_core.jobs.outcomes import JobOutcomes
from skincare_core.jobs.ports import (
    DeadLetters,
    JobSink,
    OutboxStorage,
    Queue,
    QueueStats,
    RateLimiter,
    ScheduleStore,
)
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_core.jobs.steering import JobActions, Pauses


def _read_only(queues: Mapping[str, Queue]) -> Mapping[str, Queue]:
    return MappingProxyType(dict(queues))


@frozen
class Backend:
    """A queue adapter as the engine and the operator use it.

    Each adapter package exports one async context manager yielding this value and closing its
    own connections on exit. `queues` holds one `Queue` per named queue it was asked to serve;
    `dead_letters`, `sink` and `stats` cover every named queue. `outbox` is the relay's storage,
    set only where a relay must run (a queue whose outbox rows live elsewhere); where the outbox
    row is the queue row it is None. `stats` counts the jobs by state. `schedules` records
    periodic schedules' ticks and `rate_limiter` counts job starts, shared by every process
    where the backend can (None: the adapter has none yet). `outcomes` counts the jobs each
    named queue finished lately, done or failed (None: the adapter does not count them).
    `pauses` pauses and resumes named queues and job types for every worker, and `actions`
    runs a waiting job now or cancels it (None: the adapter has neither). `minutes` keeps the
    workers' per-minute counts of each job type (done, retried, failed, run and wait times).
    `history` holds every job's timeline for a retention, searchable (None: the adapter keeps
    none, or it was turned off).
    """

    queues: Mapping[str, Queue] = field(converter=_read_only)
    dead_letters: DeadLetters
    sink: JobSink
    outbox: OutboxStorage | None
    stats: QueueStats
    schedules: ScheduleStore | None = None
    rate_limiter: RateLimiter | None = None
    outcomes: JobOutcomes | None = None
    pauses: Pauses | None = None
    actions: JobActions | None = None
    minutes: MinuteStore | None = None
    history: JobHistory | None = None

    def queue(self, name: str = DEFAULT_QUEUE) -> Queue:
        """The named queue; KeyError naming the queues served when it is not one of them."""
        try:
            return self.queues[name]
        except KeyError:
            served = ", ".join(self.queues) or "none"
            raise KeyError(f"queue {name!r} is not served here (served: {served})") from None
