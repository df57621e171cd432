"""The jobs a worker is running: their leases (heartbeat) and their deadlines (watchdog)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta

import anyio

from skincare_core.jobs.job import Message
from skincare_core.jobs.metrics import Outcome

logger = logging.getLogger("skincare_core.jobs.worker")
Extend = Callable[[list[Message], timedelta], Awaitable[None]]
# One clock read per job: time.monotonic costs a tenth of anyio.current_time's backend lookup.
_now = time.monotonic


class Slot:
    """One running job: the runner's cancel scope, when it started, when its lease was renewed."""

    __slots__ = ("message", "outcome", "renewed", "scope", "settling", "started", "timed_out")

    def __init__(self, message: Message, scope: anyio.CancelScope, now: float) -> None:
        self.message = message
        self.scope = scope
        self.started = self.renewed = now
        self.timed_out = False
        self.settling = False
        # How the job settled, for the metrics; a job stopped before it settled is cancelled.
        self.outcome: Outcome = "cancelled"


class Slots:
    """Running jobs keyed by runner, oldest start first (a dict keeps insertion order)."""

    def __init__(self) -> None:
        self._slots: dict[int, Slot] = {}

    def __len__(self) -> int:
        return len(self._slots)

    def __iter__(self) -> Iterator[Slot]:
        return iter(list(self._slots.values()))

    def start(self, runner: int, message: Message, scope: anyio.CancelScope) -> Slot:
        """Record that `runner` started `message` now."""
        slot = self._slots[runner] = Slot(message, scope, _now())
        return slot

    def finish(self, runner: int) -> None:
        """Forget the job `runner` was running."""
        del self._slots[runner]

    async def keep_leases(self, visibility: timedelta, extend: Extend) -> None:
        """Forever: extend every lease older than half the visibility timeout.

        The leases due at one tick go in one call, so a queue can renew them in one request.
        """
        half = visibility.total_seconds() / 2
        while True:
            await anyio.sleep(half / 2)
            now = _now()
            due = [slot for slot in self._slots.values() if now - slot.renewed >= half]
            for slot in due:
                slot.renewed = now
            if due:
                logger.debug("job.leases_extended", extra={"count": len(due)})
                await extend([slot.message for slot in due], visibility)

    async def enforce(self, job_timeout: float) -> None:
        """Forever: cancel each job still running `job_timeout` seconds after it started.

        One loop sleeping until the oldest deadline replaces a timer per job.
        """
        while True:
            await anyio.sleep(self._next_deadline(job_timeout) - _now())
            now = _now()
            for slot in self:
                if now - slot.started < job_timeout:
                    break
                if not (slot.timed_out or slot.settling):
                    slot.timed_out = True
                    slot.scope.cancel()

    def _next_deadline(self, timeout: float) -> float:
        for slot in self._slots.values():
            if not (slot.timed_out or slot.settling):
                return slot.started + timeout
        # Any job starting from now on has its deadline after this one.
        return _now() + timeout
