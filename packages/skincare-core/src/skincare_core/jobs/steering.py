"""The operator's levers on jobs that have not run: pause and resume a named queue or a job type
(`Pauses`), and act on one waiting job: run it now or cancel it (`JobActions`).

A pause lives where every worker process sees it (the database on Postgres and for SQS's
ledger) and survives restarts. A paused queue claims nothing; a paused type's jobs stay where
they wait while the queue's other jobs run. Jobs already running finish. Workers read the pause
state through a `PauseWatch`, at most every `WATCH_EVERY`, so a pause holds on every worker
within about a second.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Literal, Protocol

from attrs import field, frozen

from skincare_core.jobs.job import Job

# How stale a worker's view of the pauses may be: a pause holds everywhere within about this
# long plus one claim.
WATCH_EVERY = 0.5


def _names(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values)


@frozen
class Paused:
    """The named queues and the job types paused now."""

    queues: frozenset[str] = field(factory=frozenset, converter=_names)
    types: frozenset[str] = field(factory=frozenset, converter=_names)

    def holds(self, queue: str, job_type: str) -> bool:
        """Whether a job of `job_type` on `queue` must wait."""
        return queue in self.queues or job_type in self.types


NOTHING_PAUSED = Paused()


class Pauses(Protocol):
    """Pause and resume named queues and job types, for every worker of the backend."""

    async def pause(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Pause the named queue or the job type (exactly one of them); whether it was not
        paused before."""

    async def resume(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Resume the named queue or the job type (exactly one); whether it was paused."""

    async def paused(self) -> Paused:
        """What is paused now."""


def one_target(queue: str | None, job_type: str | None) -> tuple[Literal["queue", "type"], str]:
    """The pause's target as (kind, name); ValueError unless exactly one is given."""
    if (queue is None) == (job_type is None):
        raise ValueError("pause or resume either a queue or a job type")
    return ("queue", queue) if queue is not None else ("type", job_type or "")


class PauseWatch:
    """A worker's view of the pauses, read again at most every `every` seconds.

    A read that fails keeps the last view (a pause outlives a blip); the next call reads again.
    """

    def __init__(
        self,
        pauses: Pauses,
        *,
        every: float = WATCH_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pauses = pauses
        self._every = every
        self._clock = clock
        self._view = NOTHING_PAUSED
        self._read_at: float | None = None

    async def current(self) -> Paused:
        """The pauses as read at most `every` seconds ago."""
        now = self._clock()
        if self._read_at is None or now - self._read_at >= self._every:
            self._read_at = now
            self._view = await self._pauses.paused()
        return self._view


JobState = Literal["ready", "scheduled", "retrying", "queued", "running", "dead"]
"""Where a job stands: `ready` (may run now), `scheduled` (due later, never tried), `retrying`
(waiting out a retry's backoff), `queued` (handed to a broker that will deliver it: ready or
retrying, the backend cannot tell which), `running` (leased), `dead` (in the dead letters)."""

WAITING: frozenset[JobState] = frozenset({"ready", "scheduled", "retrying", "queued"})
"""The states a job can be cancelled in."""

DUE_LATER: frozenset[JobState] = frozenset({"scheduled", "retrying"})
"""The states a job can be run now from."""


@frozen
class JobView:
    """One job as an operator previews an action on it."""

    job: Job
    queue: str
    state: JobState
    attempts: int
    due_at: datetime | None

    @property
    def can_run_now(self) -> bool:
        """Whether `JobActions.run_now` would move it."""
        return self.state in DUE_LATER

    @property
    def can_cancel(self) -> bool:
        """Whether `JobActions.cancel` would remove it."""
        return self.state in WAITING


class JobActions(Protocol):
    """Look at any job that has not ended, and act on it: run it now or cancel it. (A dead job
    goes back with `DeadLetters.redrive`.)"""

    async def find(self, job_id: str) -> JobView | None:
        """The job as it stands now; None when no such job waits, runs or is dead."""

    async def run_now(self, job_id: str) -> bool:
        """Make a scheduled or retrying job due now (its attempts kept); whether it did."""

    async def cancel(self, job_id: str) -> bool:
        """Remove a waiting job so it never runs; a running one is left to finish (False)."""
