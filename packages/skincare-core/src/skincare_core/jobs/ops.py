"""The operator's view of the queues: each named queue's depth and its jobs finished lately, what
is paused, dead letters grouped by error; redrive or purge, pause and resume, and run now or
cancel any waiting job, each previewed before it is done. Works on any backend through its
ports."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime

from attrs import frozen

from skincare_core.jobs.history import HistoryQuery, JobHistory, JobRecord
from skincare_core.jobs.minutes import HOUR, MinuteStore, Trend, trends
from skincare_core.jobs.outcomes import NONE_FINISHED, RECENT, JobOutcomes, OutcomeCounts
from skincare_core.jobs.ports import DeadLetter, DeadLetters, QueueCounts, QueueStats
from skincare_core.jobs.steering import JobActions, JobView, Paused, Pauses

# The page lists at most this many dead jobs; a larger backlog is for the CLI's --limit.
LISTED = 1000


@frozen
class ErrorGroup:
    """Dead jobs that died of the same error, newest first."""

    error: str
    jobs: tuple[DeadLetter, ...]

    @property
    def newest(self) -> datetime:
        """When the group's last job died."""
        return self.jobs[0].dead_at


@frozen
class QueueRow:
    """One named queue's depth now, and its jobs done and failed over the last `RECENT` (None
    when the backend does not count them)."""

    name: str
    counts: QueueCounts
    finished: OutcomeCounts | None


@frozen
class Overview:
    """What the ops page shows: the depth of all queues, a row per named queue, the dead
    letters grouped by error, the group with the newest death first, and what is paused (None:
    the backend cannot pause), and the last hour per minute of each queue and job type (none
    where the backend keeps no per-minute counts)."""

    totals: QueueCounts
    queues: tuple[QueueRow, ...]
    groups: tuple[ErrorGroup, ...]
    paused: Paused | None = None
    queue_trends: tuple[Trend, ...] = ()
    type_trends: tuple[Trend, ...] = ()

    @property
    def finished(self) -> OutcomeCounts | None:
        """The named queues' finished jobs added up (None when the backend does not count)."""
        counted = [row.finished for row in self.queues if row.finished is not None]
        if not counted:
            return None
        return OutcomeCounts(sum(c.done for c in counted), sum(c.failed for c in counted))


@frozen
class Selection:
    """Which dead jobs an action moves: one job, one error group, or (neither) all of them."""

    job_id: str | None = None
    error: str | None = None


class SteeringUnavailable(LookupError):
    """The backend has no pauses (or no job actions): nothing to pause, run or cancel."""


class OpsService:
    """Operator actions over a backend's stats, dead letters, (where it counts them) the jobs
    its queues finished, and (where it has them) its pauses and actions on waiting jobs."""

    def __init__(
        self,
        *,
        dead_letters: DeadLetters,
        stats: QueueStats,
        queue_names: tuple[str, ...],
        outcomes: JobOutcomes | None = None,
        pauses: Pauses | None = None,
        actions: JobActions | None = None,
        history: JobHistory | None = None,
        minutes: MinuteStore | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._dead = dead_letters
        self._stats = stats
        self._names = queue_names
        self._outcomes = outcomes
        self._pauses = pauses
        self._actions = actions
        self._history = history
        self._minutes = minutes
        self._clock = clock

    @property
    def searchable(self) -> bool:
        """Whether jobs can be searched (the backend keeps a history)."""
        return self._history is not None

    async def search(self, query: HistoryQuery) -> list[JobRecord]:
        """The jobs the query finds in the history, newest first ([] without one)."""
        return [] if self._history is None else await self._history.find(query)

    async def record(self, job_id: str) -> JobRecord | None:
        """The job's timeline as the history keeps it (None without one, or if none)."""
        return None if self._history is None else await self._history.get(job_id)

    async def overview(self) -> Overview:
        """Counts, each named queue's row, the grouped dead letters and the pauses, now."""
        groups = group_by_error(await self._dead.list(limit=LISTED))
        paused = None if self._pauses is None else await self._pauses.paused()
        by_queue, by_type = await self._trends()
        totals, rows = await self._stats.stats(), await self._rows()
        return Overview(totals, rows, groups, paused, by_queue, by_type)

    async def _trends(self) -> tuple[tuple[Trend, ...], tuple[Trend, ...]]:
        if self._minutes is None:
            return (), ()
        now = self._clock()
        rows = await self._minutes.since(now - HOUR)
        return trends(rows, now, lambda r: r.queue), trends(rows, now, lambda r: r.job_type)

    async def pause(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Pause a named queue or a job type on every worker; whether it was not paused."""
        return await self._steering().pause(queue=queue, job_type=job_type)

    async def resume(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Resume a named queue or a job type; whether it was paused."""
        return await self._steering().resume(queue=queue, job_type=job_type)

    async def job(self, job_id: str) -> JobView | None:
        """Any job that has not ended (or is dead) as it stands; None when there is none."""
        if self._actions is not None:
            return await self._actions.find(job_id)
        dead = await self._dead.get(job_id)
        return None if dead is None else JobView(dead.job, dead.queue, "dead", dead.attempts, None)

    async def run_now(self, job_id: str) -> bool:
        """Run a scheduled or retrying job now; whether it was one."""
        return await self._acting().run_now(job_id)

    async def cancel(self, job_id: str) -> bool:
        """Cancel a waiting job; whether it was one (a running job finishes)."""
        return await self._acting().cancel(job_id)

    def _steering(self) -> Pauses:
        if self._pauses is None:
            raise SteeringUnavailable("this queue backend cannot pause")
        return self._pauses

    def _acting(self) -> JobActions:
        if self._actions is None:
            raise SteeringUnavailable("this queue backend cannot act on waiting jobs")
        return self._actions

    async def _rows(self) -> tuple[QueueRow, ...]:
        finished = None if self._outcomes is None else await self._outcomes.recent(RECENT)
        rows = []
        for name in self._names:
            counts = await self._stats.stats(queue=name)
            # A queue that finished nothing lately may be missing from the record.
            done = None if finished is None else finished.get(name, NONE_FINISHED)
            rows.append(QueueRow(name, counts, done))
        return tuple(rows)

    async def dead_job(self, job_id: str) -> DeadLetter | None:
        """One dead job in full; None when no job of that id is dead."""
        return await self._dead.get(job_id)

    async def preview(self, selection: Selection) -> list[DeadLetter]:
        """The dead jobs a redrive of `selection` would move (or a purge delete)."""
        if selection.job_id is not None:
            one = await self.dead_job(selection.job_id)
            return [] if one is None else [one]
        listed = await self._dead.list(limit=LISTED)
        return [d for d in listed if selection.error in (None, d.error)]

    async def redrive(self, selection: Selection) -> int:
        """Send the selected dead jobs back to their queues; how many moved."""
        dead = self._dead
        if selection.job_id is None and selection.error is None:
            return await dead.redrive_all()
        moved = [await dead.redrive(d.job.id) for d in await self.preview(selection)]
        return sum(moved)

    async def purge(self) -> int:
        """Delete every dead job; how many."""
        return await self._dead.purge()


def group_by_error(dead: list[DeadLetter]) -> tuple[ErrorGroup, ...]:
    """Dead jobs by error, each group newest first, the group with the newest death first."""
    by_error: defaultdict[str, list[DeadLetter]] = defaultdict(list)
    for item in sorted(dead, key=lambda d: d.dead_at, reverse=True):
        by_error[item.error].append(item)
    groups = [ErrorGroup(error, tuple(jobs)) for error, jobs in by_error.items()]
    return tuple(sorted(groups, key=lambda g: g.newest, reverse=True))
