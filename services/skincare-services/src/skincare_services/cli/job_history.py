"""`skincare jobs list` and `skincare jobs show ID`: find jobs in the history (live, or finished
within its retention) by id, type, state, queue, time and argument, and show one job's timeline,
alike on Postgres and SQS."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

from cyclopts import Parameter, validators

from skincare_core.jobs.history import JobState
from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import NO, CliError
from skincare_services.cli.options import JobType, Json, QueueName
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend
    from skincare_core.jobs.history import HistoryQuery, JobHistory, JobRecord

Arg = Annotated[tuple[str, ...], Parameter(name="--arg", consume_multiple=False)]
Limit = Annotated[int, Parameter(validator=validators.Number(gte=1, lte=1000))]


def list_jobs(
    *,
    job_type: JobType = None,
    state: JobState | None = None,
    queue: QueueName = None,
    since: str | None = None,
    until: str | None = None,
    arg: Arg = (),
    limit: Limit = 50,
    as_json: Json = False,
) -> int:
    """List jobs, newest first: waiting, running and finished ones the history keeps.

    A finished job counts by when it finished, a live one by when it was enqueued.

    Parameters
    ----------
    job_type
        Only jobs of this type.
    state
        Only jobs in this state.
    queue
        Only jobs of this named queue.
    since
        Only jobs at or after this: an ISO 8601 time (UTC if no offset) or 30m, 2h, 1d ago.
    until
        Only jobs before this time (as --since).
    arg
        Only jobs whose arguments hold this key=value (order_id=123); repeat for several.
    limit
        List at most this many jobs (1 to 1000).
    as_json
        Print a JSON array for scripts instead of lines for people.
    """
    query = _query(job_type, state, queue, since, until, arg, limit)
    found = run_on_backend(lambda backend: _history(backend).find(query))
    if as_json:
        print(json.dumps([record_json(r) for r in found], indent=2))
        return 0
    for record in found:
        say(_line(record))
    print(f"{len(found)} job(s)")
    return 0


def show(job_id: str, /, *, as_json: Json = False) -> int:
    """Show one job's timeline: enqueued (and by which request or trace), each attempt with its
    start, duration, worker and error, and how it ended; exit 1 if no such job is kept.

    Parameters
    ----------
    job_id
        The job's id.
    as_json
        Print the record as JSON for scripts.
    """
    record = run_on_backend(lambda backend: _history(backend).get(job_id))
    if record is None:
        message = f"no job {job_id}: it never existed, or its history was pruned"
        if as_json:  # a script's stdout stays JSON: empty, and the error goes to stderr
            raise CliError(message, NO)
        say(message)
        return NO
    if as_json:
        print(json.dumps(record_json(record), indent=2))
        return 0
    for line in timeline(record):
        say(line)
    return 0


def _history(backend: Backend) -> JobHistory:
    if backend.history is None:
        raise CliError("this backend keeps no job history (SKINCARE_HISTORY is off)")
    return backend.history


def _query(
    job_type: str | None,
    state: JobState | None,
    queue: str | None,
    since: str | None,
    until: str | None,
    arg: tuple[str, ...],
    limit: int,
) -> HistoryQuery:
    from skincare_core.jobs.history import HistoryQuery, InvalidHistoryQuery

    try:
        return HistoryQuery(
            job_type=job_type,
            state=state,
            queue=queue,
            since=_moment("--since", since),
            until=_moment("--until", until),
            args=dict(_pair(a) for a in arg),
            limit=limit,
        )
    except InvalidHistoryQuery as exc:
        raise CliError(str(exc)) from None


def _moment(option: str, raw: str | None) -> datetime | None:
    """An ISO 8601 time (UTC unless it says otherwise) or a duration ago (`2h`)."""
    if raw is None:
        return None
    from skincare_services.setting_values import parse_duration

    try:
        return datetime.now(UTC) - parse_duration(raw)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        expected = "an ISO 8601 time or a duration like 2h"
        raise CliError(f"{option}: expected {expected}, got {raw!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _pair(raw: str) -> tuple[str, str]:
    key, sep, value = raw.partition("=")
    if not sep or not key:
        raise CliError(f"--arg: expected key=value, got {raw!r}")
    return key, value


def record_json(record: JobRecord) -> dict[str, object]:
    """A job's record as JSON values: times in ISO 8601, durations in seconds."""
    return {
        "id": record.id,
        "type": record.type,
        "queue": record.queue,
        "state": record.state,
        "payload": dict(record.payload),
        "enqueued_at": _iso(record.enqueued_at),
        "due_at": _iso(record.due_at),
        "finished_at": _iso(record.finished_at),
        "attempts": record.attempts,
        "error": record.error,
        "request_id": record.request_id,
        "trace_id": record.trace_id,
        "attempts_log": [
            {
                "started_at": _iso(a.started_at),
                "ended_at": _iso(a.ended_at),
                "duration_s": None if a.duration is None else a.duration.total_seconds(),
                "worker": a.worker,
                "error": a.error,
            }
            for a in record.attempts_log
        ],
    }


def timeline(record: JobRecord) -> list[str]:
    """A job's timeline as lines for people (the caller escapes what is not printable)."""
    args = " ".join(f"{k}={v}" for k, v in record.payload.items()) or "(none)"
    lines = [
        f"job {record.id}  type={record.type}  queue={record.queue}  state={record.state}",
        f"arguments  {args}",
        f"enqueued   {_iso(record.enqueued_at) or '?'}{_origin(record)}",
    ]
    for number, attempt in enumerate(record.attempts_log, start=1):
        took = "running" if attempt.duration is None else f"{attempt.duration.total_seconds():.3f}s"
        worker = f" on {attempt.worker}" if attempt.worker else ""
        outcome = f"  error: {attempt.error}" if attempt.error else ""
        lines.append(f"attempt {number}  {_iso(attempt.started_at)}  {took}{worker}{outcome}")
    if record.finished_at is not None:
        lines.append(f"{record.state:<10} {_iso(record.finished_at)}")
    elif record.due_at is not None:
        lines.append(f"{record.state:<10} next run at {_iso(record.due_at)}")
    else:
        lines.append(record.state)
    return lines


def _origin(record: JobRecord) -> str:
    found = [f"request {record.request_id}" if record.request_id else ""]
    found.append(f"trace {record.trace_id}" if record.trace_id else "")
    named = ", ".join(f for f in found if f)
    return f"  ({named})" if named else ""


def _line(record: JobRecord) -> str:
    when = _iso(record.at) or "?"
    kind = f"{record.type:<28} queue={record.queue:<9} {record.state:<9}"
    error = f"  {record.error}" if record.error else ""
    return f"{record.id}  {kind} attempts={record.attempts}  {when}{error}"


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="milliseconds")
