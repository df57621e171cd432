"""Job history: every job's timeline (enqueued, each attempt, its end), searchable, kept for a
retention after it finishes, then pruned by one worker process at a time.

`JobHistory` is the port an operator's tools read (the CLI's `skincare jobs list/show`, the ops
page): `find` by id, type, state, queue, time and arguments, and `get` one job's timeline. The
queue adapters write the history as they settle: a finished job's record goes in the statement
that acks, retries or dead-letters it. `HistoryCleaner` runs `prune` on a timer in the worker
service; the adapter makes sure one process at a time prunes.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Literal, Protocol, TypeAlias, get_args

import anyio
from attrs import field, frozen

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.job import JsonValue, Payload

logger = logging.getLogger(__name__)

JobState: TypeAlias = Literal[
    "enqueued", "scheduled", "running", "retrying", "done", "dead", "cancelled"
]
"""Where a job is: waiting to run now (`enqueued`), waiting for its delay (`scheduled`), leased
(`running`), waiting after a failed attempt (`retrying`), or finished: acked (`done`),
dead-lettered (`dead`) or cancelled before it ran (`cancelled`)."""

JOB_STATES: tuple[JobState, ...] = get_args(JobState)
FINISHED_STATES: tuple[JobState, ...] = ("done", "dead", "cancelled")
LIVE_STATES: tuple[JobState, ...] = ("enqueued", "scheduled", "running", "retrying")

DONE_RETENTION = timedelta(hours=24)
DEAD_RETENTION = timedelta(days=14)
PRUNE_BATCH = 5000
PRUNE_EVERY = timedelta(minutes=1)
MAX_FOUND = 1000


class InvalidHistoryQuery(ValueError):
    """A search the history cannot run: an unknown state, a limit out of range, an empty time
    range. The message is one line naming what is wrong."""


@frozen
class Attempt:
    """One run of a job: when it started and ended (None: it never settled, its worker died or
    still runs), the worker process that ran it, and its error (None: it succeeded)."""

    started_at: datetime
    ended_at: datetime | None
    worker: str
    error: str | None = None

    @property
    def duration(self) -> timedelta | None:
        """How long it ran; None while it has no end."""
        return None if self.ended_at is None else self.ended_at - self.started_at


def job_state(value: str) -> JobState:
    """`value` as a JobState; InvalidHistoryQuery naming the states when it is none of them."""
    for state in JOB_STATES:
        if state == value:
            return state
    raise InvalidHistoryQuery(f"unknown job state {value!r} (one of {', '.join(JOB_STATES)})")


def _states(value: JobState) -> JobState:
    return job_state(value)


def _string_map(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


def payload_text(payload: Payload) -> dict[str, str]:
    """A payload as the history shows and searches it: a string as it is, any other value as
    its JSON text (`{"order_id": 42}` shows and matches as `order_id=42`)."""
    return {
        k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in payload.items()
    }


def typed_args(args: Mapping[str, str]) -> dict[str, JsonValue]:
    """Searched arguments as a typed payload holds them: integer and boolean texts as JSON
    values, the rest as strings. A search matches this form or the all-strings one (the
    string payloads of older releases)."""
    return {k: _scalar(v) for k, v in args.items()}


def _scalar(text: str) -> JsonValue:
    if text in ("true", "false"):
        return text == "true"
    digits = text[1:] if text.startswith("-") else text
    if digits.isascii() and digits.isdigit() and (digits == "0" or not digits.startswith("0")):
        return int(text)
    return text


@frozen
class JobRecord:
    """A job's timeline as the history keeps it.

    `payload` is the job's arguments. `enqueued_at` is when it was first enqueued (None where the
    backend cannot tell), `due_at` when a waiting job runs next, `finished_at` when a finished
    one ended. `attempts` counts deliveries; `attempts_log` holds the attempts that settled (or
    the one running), oldest first: an attempt whose worker died leaves none, so it may be
    shorter. `error` is the last attempt's error. `request_id` and `trace_id` name what
    enqueued the job, where that was recorded.
    """

    id: str
    type: str
    queue: str
    state: JobState = field(converter=_states)
    payload: Mapping[str, str] = field(factory=dict, converter=_string_map)
    enqueued_at: datetime | None = None
    due_at: datetime | None = None
    finished_at: datetime | None = None
    attempts: int = 0
    attempts_log: tuple[Attempt, ...] = ()
    error: str | None = None
    request_id: str | None = None
    trace_id: str | None = None

    @property
    def finished(self) -> bool:
        """Whether the job is over (done, dead or cancelled)."""
        return self.state in FINISHED_STATES

    @property
    def at(self) -> datetime | None:
        """The moment a search's time range and order use: when it finished, else when it was
        enqueued."""
        return self.finished_at if self.finished_at is not None else self.enqueued_at


def _limit(value: int) -> int:
    if not 1 <= value <= MAX_FOUND:
        raise InvalidHistoryQuery(f"limit must be between 1 and {MAX_FOUND}, got {value}")
    return value


def _optional_state(value: JobState | None) -> JobState | None:
    return None if value is None else _states(value)


@frozen
class HistoryQuery:
    """What to find: every field given must match. `args` match when the job's payload holds
    each key with that value (`order_id=123`). `since` and `until` bound `JobRecord.at`
    (since <= at < until). The newest `limit` records come back, newest first."""

    job_id: str | None = None
    job_type: str | None = None
    state: JobState | None = field(default=None, converter=_optional_state)
    queue: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    args: Mapping[str, str] = field(factory=dict, converter=_string_map)
    limit: int = field(default=100, converter=_limit)

    def __attrs_post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise InvalidHistoryQuery("the time range is empty: since must be before until")

    def matches(self, record: JobRecord) -> bool:
        """Whether `record` is one this query finds (the rule every backend's search follows)."""
        at = record.at
        return (
            self.job_id in (None, record.id)
            and self.job_type in (None, record.type)
            and self.state in (None, record.state)
            and self.queue in (None, record.queue)
            and (self.since is None or (at is not None and at >= self.since))
            and (self.until is None or (at is not None and at < self.until))
            and all(record.payload.get(k) == v for k, v in self.args.items())
        )


def newest_first(records: list[JobRecord], limit: int) -> list[JobRecord]:
    """The `limit` newest records by `at` (records without one last), then by id."""
    ordered = sorted(records, key=lambda r: r.id, reverse=True)
    ordered.sort(key=lambda r: (r.at is not None, r.at or datetime.min), reverse=True)
    return ordered[:limit]


def live_state(
    *, now: datetime, attempts: int, due_at: datetime, leased_until: datetime | None
) -> JobState:
    """The state of a job that has not finished: running while its lease holds, retrying once
    an attempt ran, scheduled until it is due, enqueued after."""
    if leased_until is not None and leased_until > now:
        return "running"
    if attempts > 0:
        return "retrying"
    return "scheduled" if due_at > now else "enqueued"


@frozen
class Retention:
    """How long finished jobs stay in the history: `done` for done and cancelled ones, `dead`
    for dead ones."""

    done: timedelta = DONE_RETENTION
    dead: timedelta = DEAD_RETENTION

    def __attrs_post_init__(self) -> None:
        if self.done <= timedelta(0) or self.dead <= timedelta(0):
            raise ValueError("history retentions must be positive")

    def kept_for(self, state: JobState) -> timedelta:
        """The retention of a finished job in `state`."""
        return self.dead if state == "dead" else self.done


class JobHistory(Protocol):
    """Every job of a backend, live or finished within its retention, by its timeline."""

    async def find(self, query: HistoryQuery) -> list[JobRecord]:
        """The records `query` matches, newest first, at most `query.limit`."""

    async def get(self, job_id: str) -> JobRecord | None:
        """The job's record with its attempts; None if no such job is live or kept."""

    async def prune(self, retention: Retention, *, batch: int = PRUNE_BATCH) -> int:
        """Delete the finished jobs past their retention, `batch` rows per statement, unless
        another process is pruning (then return 0 at once); how many were deleted."""


def worker_name() -> str:
    """This process as the history names the worker of an attempt: `host:pid`."""
    return f"{socket.gethostname()}:{os.getpid()}"


class HistoryCleaner:
    """Prunes the history every `every`: run it as a task of the worker service. A round that
    fails (the database is away) is logged and the next one tries again."""

    def __init__(
        self,
        history: JobHistory,
        retention: Retention,
        *,
        every: timedelta = PRUNE_EVERY,
        batch: int = PRUNE_BATCH,
    ) -> None:
        if every <= timedelta(0) or batch < 1:
            raise ValueError("the cleaner's period must be positive and its batch >= 1")
        self._history = history
        self._retention = retention
        self._every = every.total_seconds()
        self._batch = batch

    async def run(self) -> None:
        """Prune now, then every period, until cancelled."""
        while True:
            await self.prune_once()
            await anyio.sleep(self._every)

    async def prune_once(self) -> int:
        """One round: how many records it deleted (0 after a failure)."""
        try:
            pruned = await self._history.prune(self._retention, batch=self._batch)
        except Unavailable as error:
            logger.warning("history.prune_failed", extra={"error": repr(error)})
            return 0
        if pruned:
            logger.info("history.pruned", extra={"records": pruned})
        return pruned
