"""An in-memory named Queue + DeadLetters + QueueStats + JobOutcomes with real leases, delays,
unique keys and cancel."""

from __future__ import annotations

import builtins
import itertools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import anyio
from attrs import define

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.envelope import Envelope, due_at
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.outcomes import RECENT, OutcomeCounts
from skincare_core.jobs.ports import Burial, DeadLetter, QueueCounts, Retry
from skincare_core.jobs.routing import DEFAULT_QUEUE, check_queue_name
from skincare_core.testing.jobs.memory_dead import MemoryDeadLetters
from skincare_core.testing.jobs.memory_keys import UniqueKeys
from skincare_core.testing.jobs.memory_outcomes import MinuteOutcomes


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


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InMemoryQueue(MemoryDeadLetters):
    """FIFO among visible jobs. `max_receives` mimics an SQS redrive policy when set.

    Delays run on `monotonic`; a `not_before` time is turned into a delay with `wall_clock`.
    Give several queues one `unique_keys` to make a key unique across them (`InMemoryQueues`
    does). As a sink on its own it takes every envelope, whatever queue it names.
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
        self._seq = itertools.count()
        self._wakeup: anyio.Event | None = None
        self._outcomes = MinuteOutcomes(wall_clock)

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
        return self._add(
            decode_job(envelope.body), due_at(envelope, self._wall()), envelope.unique_key
        )

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Add every envelope's job here; how many were added (unique keys honoured)."""
        return sum([await self.enqueue(envelope) for envelope in envelopes])

    def unique_key_taken(self, key: str) -> bool:
        """Whether a live job holds `key` (the in-memory outbox checks this before adding)."""
        return self._keys.taken(key)

    async def cancel(self, job_id: str) -> bool:
        """Remove a ready or scheduled job; a running (leased) job is left to finish: False."""
        entry = self._entries.get(job_id)
        if entry is None or self._running(entry):
            return False
        self._remove(entry)
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
            with anyio.move_on_after(min(deadline, self._next_visible()) - now):
                await self._wakeup.wait()

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """Remove each job whose receipt is live."""
        for message in messages:
            if self._live(message):
                self._remove(self._entries[message.job.id])
                self._outcomes.add(done=1)

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

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        """Move each job whose receipt is live to the dead letters with its reason."""
        for burial in burials:
            if self._live(burial.message):
                self._bury(self._entries[burial.message.job.id], burial.reason)

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep each lease for `visibility` more if its receipt is live."""
        for message in messages:
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

    def _add(self, job: Job, due: datetime | None, unique_key: str | None) -> bool:
        # A job id is live or dead at most once, as a table row keyed by id would be.
        if job.id in self._entries or job.id in self._dead:
            return False
        if not self._keys.take(unique_key, job.id):
            return False
        wait = 0.0 if due is None else max(0.0, (due - self._wall()).total_seconds())
        entry = _Entry(job, next(self._seq), visible_at=self._now() + wait, unique_key=unique_key)
        self._entries[job.id] = entry
        self._wake()
        return True

    def _revive(self, job: Job) -> None:
        self._add(job, None, None)

    def _claim(self, limit: int) -> builtins.list[Message]:
        now = self._now()
        visible = sorted((e for e in self._entries.values() if e.visible_at <= now), key=_seq)
        messages: list[Message] = []
        for entry in visible:
            if len(messages) == limit:
                break
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
        return messages

    def _running(self, entry: _Entry) -> bool:
        return entry.leased and entry.visible_at > self._now()

    def _next_visible(self) -> float:
        return min((e.visible_at for e in self._entries.values()), default=float("inf"))

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
        self._outcomes.add(failed=1)
        self._dead[entry.job.id] = DeadLetter(
            entry.job, entry.attempts, reason, datetime.now(UTC), self.name
        )


def _seq(entry: _Entry) -> int:
    return entry.seq
