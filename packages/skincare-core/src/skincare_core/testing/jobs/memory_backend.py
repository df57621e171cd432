"""`InMemoryQueues`, one in-memory queue per name, and `memory_backend`, the backend shape of it."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import TypedDict, Unpack

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.outcomes import RECENT, OutcomeCounts
from skincare_core.jobs.ports import DeadLetter, OutboxStorage, QueueCounts
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_core.jobs.steering import JobView
from skincare_core.testing.jobs.memory_history import InMemoryHistory
from skincare_core.testing.jobs.memory_keys import UniqueKeys
from skincare_core.testing.jobs.memory_minutes import InMemoryMinuteStore
from skincare_core.testing.jobs.memory_queue import InMemoryQueue
from skincare_core.testing.jobs.memory_schedules import InMemoryRateLimiter, InMemoryScheduleStore
from skincare_core.testing.jobs.memory_steering import InMemoryPauses


class QueueOptions(TypedDict, total=False):
    """InMemoryQueue's keyword options but its unique keys (the queues share theirs)."""

    visibility_timeout: timedelta
    wait: timedelta
    max_receives: int | None
    monotonic: Callable[[], float]
    wall_clock: Callable[[], datetime]
    caps: ConcurrencyCaps


class InMemoryQueues:
    """Named in-memory queues sharing unique keys and a history (`history`): the sink (by each
    envelope's queue), the dead letters and the stats of all of them. A queue is made on first
    use with `options` (InMemoryQueue's); `caps` count the running jobs of all of them."""

    def __init__(self, **options: Unpack[QueueOptions]) -> None:
        self._options = options
        self._keys = UniqueKeys()
        wall = options.get("wall_clock")
        self.history = InMemoryHistory() if wall is None else InMemoryHistory(wall_clock=wall)
        self._queues: dict[str, InMemoryQueue] = {}
        self.pauses = InMemoryPauses(on_resume=self._wake_all)
        self.minutes = InMemoryMinuteStore()

    def queue(self, name: str = DEFAULT_QUEUE) -> InMemoryQueue:
        """The queue called `name`, made now if it is new."""
        if name not in self._queues:
            self._queues[name] = InMemoryQueue(
                name,
                unique_keys=self._keys,
                running=self._running,
                pauses=self.pauses,
                history=self.history,
                **self._options,
            )
        return self._queues[name]

    def _running(self) -> builtins.list[tuple[str, str]]:
        return [job for queue in self._queues.values() for job in queue.running_jobs()]

    @property
    def every(self) -> builtins.list[InMemoryQueue]:
        """Every queue made so far, in name order."""
        return sorted(self._queues.values(), key=lambda queue: queue.name)

    async def find(self, job_id: str) -> JobView | None:
        """The job with this id in whichever queue holds it (`JobActions`)."""
        views = (q.view(job_id) for q in self._queues.values())
        return next((view for view in views if view is not None), None)

    async def run_now(self, job_id: str) -> bool:
        """Make the scheduled or retrying job visible now, wherever it waits."""
        return any(q.run_now(job_id) for q in self._queues.values())

    async def cancel(self, job_id: str) -> bool:
        """Remove the waiting job, wherever it waits; a running one is left alone."""
        return any([await q.cancel(job_id) for q in self._queues.values()])

    def _wake_all(self) -> None:
        for queue in self._queues.values():
            queue.wake()

    def unique_key_taken(self, key: str) -> bool:
        """Whether a live job of any queue holds `key`."""
        return self._keys.taken(key)

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Each envelope to its own queue; how many were added."""
        added = 0
        for envelope in envelopes:
            added += await self.queue(envelope.queue).enqueue_many([envelope])
        return added

    async def count(self, *, queue: str | None = None) -> int:
        """Dead jobs of every queue (or of one)."""
        return sum([await q.count() for q in self._chosen(queue)])

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> builtins.list[DeadLetter]:
        """Dead jobs of every queue (or of one), oldest first."""
        chosen = self._chosen(queue)
        dead = [d for q in chosen for d in await q.list(job_type=job_type, limit=limit)]
        return sorted(dead, key=lambda d: d.dead_at)[:limit]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id, in whichever queue it died."""
        for queue in self._queues.values():
            if (dead := await queue.get(job_id)) is not None:
                return dead
        return None

    async def redrive(self, job_id: str) -> bool:
        """Back to the queue it died in."""
        return any([await q.redrive(job_id) for q in self._queues.values()])

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Every dead job (of one type, of one queue) back to its queue."""
        return sum([await q.redrive_all(job_type=job_type) for q in self._chosen(queue)])

    async def purge(self) -> int:
        """Forget every dead job of every queue."""
        return sum([await q.purge() for q in self._queues.values()])

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """The counts of every queue (or of one) added up; the oldest ready job of them."""
        counts = [await q.stats() for q in self._chosen(queue)]
        ages = [c.oldest_ready_age for c in counts if c.oldest_ready_age is not None]
        return QueueCounts(
            ready=sum(c.ready for c in counts),
            scheduled=sum(c.scheduled for c in counts),
            leased=sum(c.leased for c in counts),
            dead=sum(c.dead for c in counts),
            oldest_ready_age=max(ages, default=None),
        )

    async def recent(self, window: timedelta = RECENT) -> Mapping[str, OutcomeCounts]:
        """Each queue's jobs done and failed in the window's minutes."""
        return {q.name: (await q.recent(window))[q.name] for q in self._queues.values()}

    def _chosen(self, queue: str | None) -> builtins.list[InMemoryQueue]:
        if queue is None:
            return builtins.list(self._queues.values())
        return [self._queues[queue]] if queue in self._queues else []


@asynccontextmanager
async def memory_backend(
    queues: InMemoryQueues | None = None,
    *,
    names: Iterable[str] = (DEFAULT_QUEUE,),
    outbox: OutboxStorage | None = None,
) -> AsyncIterator[Backend]:
    """`queues` (fresh `InMemoryQueues` if None) serving `names`, as sink, dead letters and
    stats.

    Pass `outbox` to have a relay forward from it, as with a queue whose outbox lives elsewhere.
    Keep a reference to `queues` to inspect them (`queue(name).depth`, `.jobs()`); nothing needs
    closing.
    """
    queues = InMemoryQueues() if queues is None else queues
    served = {name: queues.queue(name) for name in names}
    yield Backend(
        queues=served,
        dead_letters=queues,
        sink=queues,
        outbox=outbox,
        stats=queues,
        schedules=InMemoryScheduleStore(queues),
        rate_limiter=InMemoryRateLimiter(),
        outcomes=queues,
        pauses=queues.pauses,
        actions=queues,
        minutes=queues.minutes,
        history=queues.history,
    )
