"""An in-memory named Queue + DeadLetters + QueueStats + JobOutcomes with real leases, delays,
unique keys and cancel."""

from __future__ import annotations

import builtins
import itertools
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import anyio
from attrs import define

from skincare_core.jobs.caps import NO_CAPS, CapRoom, ConcurrencyCaps, running_by_cap
from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.envelope import Envelope, due_at
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.outcomes import RECENT, OutcomeCounts
from skincare_core.jobs.ports import Burial, DeadLetter, QueueCounts, Retry
from skincare_core.jobs.priority import DEFAULT_PRIORITY
from skincare_core.jobs.routing import DEFAULT_QUEUE, check_queue_name
from skincare_core.jobs.steering import NOTHING_PAUSED, JobState, JobView, Paused
from skincare_core.testing.jobs.memory_dead import MemoryDeadLetters
from skincare_core.testing.jobs.memory_history import InMemoryHistory
from skincare_core.testing.jobs.memory_keys import UniqueKeys
from skincare_core.testing.jobs.memory_outcomes import MinuteOutcomes
from skincare_core.testing.jobs.memory_steering import InMemoryPauses


@define
class _Entry:
    job: Job
    seq: int
    attempts: int = 0
    snoozes: int = 0
    visible_at: float = 0.0
    receipt: str | None = None
    leased: bool = False
    unique_key: str | None = None
    priority: int = DEFAULT_PRIORITY


_HELD_BACK_POLL = 0.01


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InMemoryQueue(MemoryDeadLetters):
    """Visible jobs by priority (1 first), then earliest due, then enqueue order, as the
    Postgres claim takes them. `max_receives` mimics an SQS redrive policy when set.

    Delays run on `monotonic`; a `not_before` time is turned into a delay with `wall_clock`.
    Give several queues one `unique_keys` to make a key unique across them (`InMemoryQueues`
    does), and one `history` to keep their jobs' timelines. `caps` hold back a job while a cap
    it falls under is full, counting the running jobs `running` lists as (queue, job type)
    (None: this queue's own; `InMemoryQueues` gives all of its queues'). As a sink on its own it
    takes every envelope, whatever queue it names.
    """

    def __init__(
        self,
        name: str = DEFAULT_QUEUE,
        *,
        visibility_timeout: timedelta = timedelta(seconds=30),
        wait: timedelta = timedelta(seconds=1),
        max_receives: int | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = _utc_now,
        unique_keys: UniqueKeys | None = None,
        caps: ConcurrencyCaps = NO_CAPS,
        running: Callable[[], Iterable[tuple[str, str]]] | None = None,
        pauses: InMemoryPauses | None = None,
        history: InMemoryHistory | None = None,
    ) -> None:
        super().__init__()
        self.name = check_queue_name(name)
        self._visibility = visibility_timeout.total_seconds()
        self._wait = wait.total_seconds()
        self._max_receives = max_receives
        self._now = monotonic
        self._wall = wall_clock
        self._keys = UniqueKeys() if unique_keys is None else unique_keys
        self._entries: dict[str, _Entry] = {}
        # A dead job keeps its priority for its redrive, as a table row would.
        self._dead_priorities: dict[str, int] = {}
        self._seq = itertools.count()
        self._wakeup: anyio.Event | None = None
        self._outcomes = MinuteOutcomes(wall_clock)
        self._caps = caps
        self._held_back = False
        self._all_running = self.running_jobs if running is None else running
        self._pauses = pauses
        self._history = history

    @property
    def depth(self) -> int:
        """Jobs not yet acked, dead or cancelled: ready, scheduled or running."""
        return len(self._entries)

    def jobs(self) -> builtins.list[Job]:
        """Live jobs in enqueue order."""
        return [e.job for e in sorted(self._entries.values(), key=lambda e: e.seq)]

    async def enqueue(self, envelope: Envelope) -> bool:
        """Add the envelope's job, due by this queue's wall clock; False if its unique key is
        held by a live job. The envelope is trusted: `Envelope` checked it."""
        job, due = decode_job(envelope.body), due_at(envelope, self._wall())
        return self._add(job, due, envelope.unique_key, envelope.priority)

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Add every envelope's job here; how many were added (unique keys honoured)."""
        return sum([await self.enqueue(envelope) for envelope in envelopes])

    def running_jobs(self) -> builtins.list[tuple[str, str]]:
        """The (queue, job type) of each job running now (a live lease)."""
        running = (e for e in self._entries.values() if self._running(e))
        return [(self.name, e.job.type) for e in running]

    def unique_key_taken(self, key: str) -> bool:
        """Whether a live job holds `key` (the in-memory outbox checks this before adding)."""
        return self._keys.taken(key)

    async def cancel(self, job_id: str) -> bool:
        """Remove a ready or scheduled job; a running (leased) job is left to finish: False."""
        entry = self._entries.get(job_id)
        if entry is None or self._running(entry):
            return False
        self._remove(entry)
        if self._history is not None:
            self._history.finished(job_id, "cancelled")
        return True

    async def receive(self, max_messages: int = 1) -> builtins.list[Message]:
        """Lease up to `max_messages` visible jobs, waiting up to `wait` for one."""
        deadline = self._now() + self._wait
        while True:
            messages = self._claim(max_messages)
            now = self._now()
            if messages or now >= deadline:
                return messages
            if self._wakeup is None or self._wakeup.is_set():
                self._wakeup = anyio.Event()
            # A job held back by a cap is due already: look again when a slot may have freed.
            next_at = now + _HELD_BACK_POLL if self._held_back else self._next_visible()
            with anyio.move_on_after(min(deadline, next_at) - now):
                await self._wakeup.wait()

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """Remove each job whose receipt is live."""
        for message in messages:
            if self._live(message):
                self._remove(self._entries[message.job.id])
                self._outcomes.add(done=1)
                if self._history is not None:
                    self._history.finished(message.job.id, "done")

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        """Make each job whose receipt is live visible after its delay (scheduled, not running)."""
        for retry in retries:
            if self._live(retry.message):
                entry = self._entries[retry.message.job.id]
                entry.leased = False
                if retry.snooze:
                    entry.attempts -= 1
                    entry.snoozes += 1
                self._lease(retry.message, retry.delay)
                if self._history is not None:
                    due = self._wall() + retry.delay
                    self._history.retried(retry.message.job.id, due, retry.error)

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        """Move each job whose receipt is live to the dead letters with its reason."""
        for burial in burials:
            if self._live(burial.message):
                self._bury(self._entries[burial.message.job.id], burial.reason)

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep each lease for `visibility` more if its receipt is live."""
        for message in messages:
            if self._history is not None and self._live(message):
                self._history.extended(message.job.id, self._wall() + visibility)
            self._lease(message, visibility)

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """Ready (an expired lease is ready again), scheduled, leased and dead jobs (none when
        `queue` names another queue)."""
        if queue not in (None, self.name):
            return QueueCounts(0, 0, 0, 0, None)
        now = self._now()
        ready = [e.visible_at for e in self._entries.values() if e.visible_at <= now]
        leased = sum(self._running(e) for e in self._entries.values())
        return QueueCounts(
            ready=len(ready),
            scheduled=len(self._entries) - len(ready) - leased,
            leased=leased,
            dead=len(self._dead),
            oldest_ready_age=timedelta(seconds=now - min(ready)) if ready else None,
        )

    async def recent(self, window: timedelta = RECENT) -> Mapping[str, OutcomeCounts]:
        """This queue's jobs acked (done) and dead-lettered (failed) in the window's minutes."""
        return {self.name: self._outcomes.recent(window)}

    def _add(self, job: Job, due: datetime | None, unique_key: str | None, priority: int) -> bool:
        # A job id is live or dead at most once, as a table row keyed by id would be.
        if job.id in self._entries or job.id in self._dead:
            return False
        if not self._keys.take(unique_key, job.id):
            return False
        wait = 0.0 if due is None else max(0.0, (due - self._wall()).total_seconds())
        entry = _Entry(job, next(self._seq), visible_at=self._now() + wait)
        entry.unique_key, entry.priority = unique_key, priority
        self._entries[job.id] = entry
        if self._history is not None:
            self._history.enqueued(job, self.name, self._wall() + timedelta(seconds=wait))
        self._wake()
        return True

    def _revive(self, job: Job) -> None:
        self._add(job, None, None, self._dead_priorities.pop(job.id, DEFAULT_PRIORITY))

    def view(self, job_id: str) -> JobView | None:
        """The live or dead job with this id as it stands (`JobActions.find`)."""
        entry = self._entries.get(job_id)
        if entry is None:
            dead = self._dead.get(job_id)
            if dead is None:
                return None
            return JobView(dead.job, self.name, "dead", dead.attempts, None)
        due = self._wall() + timedelta(seconds=max(0.0, entry.visible_at - self._now()))
        return JobView(entry.job, self.name, self._state(entry), entry.attempts, due)

    def run_now(self, job_id: str) -> bool:
        """Make a scheduled or retrying job visible now; whether it was one."""
        entry = self._entries.get(job_id)
        if entry is None or self._state(entry) not in ("scheduled", "retrying"):
            return False
        entry.visible_at = self._now()
        self._wake()
        return True

    def wake(self) -> None:
        """Wake a waiting receive (the pauses changed)."""
        self._wake()

    def _state(self, entry: _Entry) -> JobState:
        if self._running(entry):
            return "running"
        if entry.visible_at <= self._now():
            return "ready"
        return "retrying" if entry.attempts else "scheduled"

    def _paused(self) -> Paused:
        return NOTHING_PAUSED if self._pauses is None else self._pauses.now

    def _claimable(self, now: float) -> builtins.list[_Entry]:
        paused = self._paused()
        if self.name in paused.queues:
            return []
        entries = self._entries.values()
        return [e for e in entries if e.visible_at <= now and e.job.type not in paused.types]

    def _claim(self, limit: int) -> builtins.list[Message]:
        now = self._now()
        visible = sorted(self._claimable(now), key=_order)
        messages: list[Message] = []
        room = CapRoom(self._caps, running_by_cap(self._caps, self._all_running()))
        self._held_back = False
        for entry in visible:
            if len(messages) == limit:
                break
            # Held back by a full cap: not leased, so no attempt is spent.
            if self._caps and not room.take(self.name, entry.job.type):
                self._held_back = True
                continue
            if self._max_receives is not None and entry.attempts >= self._max_receives:
                self._bury(entry, f"received {entry.attempts} times (max_receives)")
                continue
            entry.attempts += 1
            entry.leased = True
            entry.receipt = uuid.uuid4().hex
            entry.visible_at = now + self._visibility
            messages.append(
                Message(entry.receipt, entry.job, entry.attempts, snoozes=entry.snoozes)
            )
            if self._history is not None:
                lease = timedelta(seconds=self._visibility)
                self._history.started(entry.job.id, self._wall() + lease)
        return messages

    def _running(self, entry: _Entry) -> bool:
        return entry.leased and entry.visible_at > self._now()

    def _next_visible(self) -> float:
        # Paused jobs are never next: a resume wakes the receivers.
        paused = self._paused()
        if self.name in paused.queues:
            return float("inf")
        times = (e.visible_at for e in self._entries.values() if e.job.type not in paused.types)
        return min(times, default=float("inf"))

    def _live(self, message: Message) -> bool:
        entry = self._entries.get(message.job.id)
        return entry is not None and entry.receipt == message.receipt

    def _lease(self, message: Message, duration: timedelta) -> None:
        if self._live(message):
            self._entries[message.job.id].visible_at = self._now() + duration.total_seconds()
            self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    def _remove(self, entry: _Entry) -> None:
        del self._entries[entry.job.id]
        self._keys.release(entry.unique_key, entry.job.id)

    def _bury(self, entry: _Entry, reason: str) -> None:
        self._remove(entry)
        self._dead_priorities[entry.job.id] = entry.priority
        self._outcomes.add(failed=1)
        if self._history is not None:
            self._history.finished(entry.job.id, "dead", reason)
        self._dead[entry.job.id] = DeadLetter(
            entry.job, entry.attempts, reason, datetime.now(UTC), self.name
        )


def _order(entry: _Entry) -> tuple[int, float, int]:
    return entry.priority, entry.visible_at, entry.seq
