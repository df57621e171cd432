"""An in-memory Queue + DeadLetters + QueueStats with real leases, delays, attempts and stale
receipts."""

from __future__ import annotations

import builtins
import itertools
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import anyio
from attrs import define

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.ports import DeadLetter, QueueCounts


@define
class _Entry:
    job: Job
    seq: int
    attempts: int = 0
    visible_at: float = 0.0
    receipt: str | None = None
    leased: bool = False


class InMemoryQueue:
    """FIFO among visible jobs. `max_receives` mimics an SQS redrive policy when set."""

    def __init__(
        self,
        *,
        visibility_timeout: timedelta = timedelta(seconds=30),
        wait: timedelta = timedelta(seconds=1),
        max_receives: int | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._visibility = visibility_timeout.total_seconds()
        self._wait = wait.total_seconds()
        self._max_receives = max_receives
        self._now = monotonic
        self._entries: dict[str, _Entry] = {}
        self._dead: dict[str, DeadLetter] = {}
        self._seq = itertools.count()
        self._wakeup: anyio.Event | None = None

    @property
    def depth(self) -> int:
        """Jobs not yet acked or dead, leased or not."""
        return len(self._entries)

    def jobs(self) -> list[Job]:
        """Live jobs in enqueue order."""
        return [e.job for e in sorted(self._entries.values(), key=lambda e: e.seq)]

    async def enqueue(self, job: Job) -> None:
        """Add a job, visible now; JobTooLarge past the size limit."""
        self._put(decode_job(encode_job(job)), attempts=0)

    async def enqueue_many(self, jobs: Sequence[Job]) -> None:
        """Add several jobs."""
        for job in jobs:
            await self.enqueue(job)

    async def receive(self, max_messages: int = 1) -> list[Message]:
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

    async def ack(self, message: Message) -> None:
        """Remove the job if the receipt is live."""
        if self._live(message):
            del self._entries[message.job.id]

    async def nack(self, message: Message, delay: timedelta) -> None:
        """Make the job visible after `delay` if the receipt is live."""
        if self._live(message):
            self._entries[message.job.id].leased = False
        self._lease(message, delay)

    async def extend(self, message: Message, visibility: timedelta) -> None:
        """Keep the lease for `visibility` more if the receipt is live."""
        self._lease(message, visibility)

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Move the job to the dead letters if the receipt is live."""
        if self._live(message):
            entry = self._entries.pop(message.job.id)
            self._bury(entry, reason)

    async def stats(self) -> QueueCounts:
        """Ready (an expired lease is ready again), scheduled, leased and dead jobs."""
        now = self._now()
        ready = [e.visible_at for e in self._entries.values() if e.visible_at <= now]
        leased = sum(e.leased for e in self._entries.values() if e.visible_at > now)
        return QueueCounts(
            ready=len(ready),
            scheduled=len(self._entries) - len(ready) - leased,
            leased=leased,
            dead=len(self._dead),
            oldest_ready_age=timedelta(seconds=now - min(ready)) if ready else None,
        )

    async def count(self) -> int:
        """Dead jobs."""
        return len(self._dead)

    async def list(self, *, job_type: str | None = None, limit: int = 100) -> list[DeadLetter]:
        """Dead jobs, oldest first."""
        dead = sorted(self._dead.values(), key=lambda d: d.dead_at)
        return [d for d in dead if job_type in (None, d.job.type)][:limit]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id, if it is dead."""
        return self._dead.get(job_id)

    async def redrive(self, job_id: str) -> bool:
        """Back to the queue with attempts reset."""
        dead = self._dead.pop(job_id, None)
        if dead is not None:
            self._put(dead.job, attempts=0)
        return dead is not None

    async def redrive_all(self, *, job_type: str | None = None) -> int:
        """Redrive every dead job (of one type)."""
        ids = [d.job.id for d in await self.list(job_type=job_type, limit=len(self._dead))]
        for job_id in ids:
            await self.redrive(job_id)
        return len(ids)

    async def purge(self) -> int:
        """Forget every dead job."""
        count = len(self._dead)
        self._dead.clear()
        return count

    def _put(self, job: Job, *, attempts: int) -> None:
        self._entries[job.id] = _Entry(job, next(self._seq), attempts, self._now())
        self._wake()

    def _claim(self, limit: int) -> builtins.list[Message]:
        now = self._now()
        visible = sorted((e for e in self._entries.values() if e.visible_at <= now), key=_seq)
        messages: list[Message] = []
        for entry in visible:
            if len(messages) == limit:
                break
            if self._max_receives is not None and entry.attempts >= self._max_receives:
                del self._entries[entry.job.id]
                self._bury(entry, f"received {entry.attempts} times (max_receives)")
                continue
            entry.attempts += 1
            entry.leased = True
            entry.receipt = uuid.uuid4().hex
            entry.visible_at = now + self._visibility
            messages.append(Message(entry.receipt, entry.job, entry.attempts))
        return messages

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

    def _bury(self, entry: _Entry, reason: str) -> None:
        self._dead[entry.job.id] = DeadLetter(entry.job, entry.attempts, reason, datetime.now(UTC))


def _seq(entry: _Entry) -> int:
    return entry.seq
