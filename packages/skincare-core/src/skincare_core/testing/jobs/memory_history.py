"""`InMemoryHistory`: the JobHistory of in-memory queues, which tell it each job's events."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import UTC, datetime

from attrs import define, evolve, field

from skincare_core.jobs.history import (
    PRUNE_BATCH,
    Attempt,
    HistoryQuery,
    JobRecord,
    JobState,
    Retention,
    live_state,
    newest_first,
    payload_text,
    worker_name,
)
from skincare_core.jobs.job import Job


def _utc_now() -> datetime:
    return datetime.now(UTC)


@define
class _Timeline:
    """A job's record as its events build it; the state of a live job is read off its times."""

    job: Job
    queue: str
    enqueued_at: datetime
    due_at: datetime
    attempts: int = 0
    leased_until: datetime | None = None
    log: builtins.list[Attempt] = field(factory=list)
    finished: JobState | None = None
    finished_at: datetime | None = None

    def record(self, now: datetime) -> JobRecord:
        state = self.finished or live_state(
            now=now, attempts=self.attempts, due_at=self.due_at, leased_until=self.leased_until
        )
        errors = [a.error for a in self.log if a.ended_at is not None]
        return JobRecord(
            id=self.job.id,
            type=self.job.type,
            queue=self.queue,
            state=state,
            payload=payload_text(self.job.payload),
            enqueued_at=self.enqueued_at,
            due_at=None if self.finished else self.due_at,
            finished_at=self.finished_at,
            attempts=self.attempts,
            attempts_log=tuple(self.log),
            error=errors[-1] if errors else None,
            request_id=self.job.headers.get("request_id"),
            trace_id=_trace_id(self.job.headers.get("traceparent")),
        )


def _trace_id(traceparent: str | None) -> str | None:
    # W3C traceparent: version-traceid-spanid-flags.
    parts = (traceparent or "").split("-")
    return parts[1] if len(parts) == 4 else None


class InMemoryHistory:
    """Every job the queues sharing it were given, live or finished, until pruned.

    The queues call `enqueued`, `started`, `retried`, `extended` and `finished` as things
    happen; `wall_clock` dates the events (the queues' own).
    """

    def __init__(
        self, *, wall_clock: Callable[[], datetime] = _utc_now, worker: str | None = None
    ) -> None:
        self._wall = wall_clock
        self._worker = worker or worker_name()
        self._jobs: dict[str, _Timeline] = {}

    def enqueued(self, job: Job, queue: str, due_at: datetime) -> None:
        """A job was enqueued (or redriven: a new timeline keeps the attempts it had)."""
        now = self._wall()
        old = self._jobs.get(job.id)
        log = old.log if old is not None else []
        self._jobs[job.id] = _Timeline(job, queue, now if old is None else old.enqueued_at, due_at)
        self._jobs[job.id].log = log

    def started(self, job_id: str, leased_until: datetime) -> None:
        """An attempt started, leased until `leased_until`."""
        timeline = self._jobs[job_id]
        timeline.attempts += 1
        timeline.leased_until = leased_until
        timeline.log.append(Attempt(self._wall(), None, self._worker))

    def extended(self, job_id: str, leased_until: datetime) -> None:
        """The running attempt's lease was renewed."""
        self._jobs[job_id].leased_until = leased_until

    def retried(self, job_id: str, due_at: datetime, error: str | None) -> None:
        """The running attempt failed with `error`; the job runs again at `due_at`."""
        timeline = self._jobs[job_id]
        self._end(timeline, error)
        timeline.leased_until, timeline.due_at = None, due_at

    def finished(self, job_id: str, state: JobState, error: str | None = None) -> None:
        """The job ended in `state` (its running attempt, if any, with `error`)."""
        timeline = self._jobs[job_id]
        if state != "cancelled":
            self._end(timeline, error)
        timeline.finished, timeline.finished_at = state, self._wall()
        timeline.leased_until = None

    async def find(self, query: HistoryQuery) -> list[JobRecord]:
        """The records `query` matches, newest first."""
        now = self._wall()
        found = [r for t in self._jobs.values() if query.matches(r := t.record(now))]
        return newest_first(found, query.limit)

    async def get(self, job_id: str) -> JobRecord | None:
        """The job's record; None if it is unknown or pruned."""
        timeline = self._jobs.get(job_id)
        return None if timeline is None else timeline.record(self._wall())

    async def prune(self, retention: Retention, *, batch: int = PRUNE_BATCH) -> int:
        """Forget the finished jobs past their retention; how many."""
        now = self._wall()
        gone = [
            job_id
            for job_id, t in self._jobs.items()
            if t.finished is not None
            and t.finished_at is not None
            and t.finished_at < now - retention.kept_for(t.finished)
        ]
        for job_id in gone:
            del self._jobs[job_id]
        return len(gone)

    def _end(self, timeline: _Timeline, error: str | None) -> None:
        if timeline.log and timeline.log[-1].ended_at is None:
            timeline.log[-1] = evolve(timeline.log[-1], ended_at=self._wall(), error=error)
