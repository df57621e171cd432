"""`skincare queue stats`: the jobs counted by state, of every named queue or (`--queue`) of one,
and what is paused, for people, scripts and alarms; `skincare queue pause|resume|paused`: stop
and restart a named queue's (or a job type's) claims on every worker."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cyclopts import App

from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import NO, USAGE, CliError
from skincare_services.cli.options import JobType, Json, QueueName
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend
    from skincare_core.jobs.ports import QueueCounts
    from skincare_core.jobs.steering import Paused, Pauses


def register(app: App) -> None:
    """Add `queue` and its commands to the `skincare` app."""
    queue = App(name="queue", help="Look at the job queue; pause and resume it.")
    queue.command(stats)
    queue.command(pause)
    queue.command(resume)
    queue.command(paused)
    app.command(queue)


def stats(*, queue: QueueName = None, as_json: Json = False) -> int:
    """Count the jobs by state: ready, scheduled (a retry's delay), leased, dead; and how long
    the oldest ready job has waited.

    Parameters
    ----------
    queue
        Count only the jobs of this named queue (all zero when it is none of them).
    as_json
        Print one JSON object for scripts instead of a table for people.
    """
    counts, held = run_on_backend(lambda backend: _stats(backend, queue))
    if as_json:
        say(json.dumps(_as_dict(counts, held)))
    else:
        # `say` escapes a newline: the table goes out a line at a time.
        for line in _table(counts, held).splitlines():
            say(line)
    return 0


def pause(queue: str | None = None, /, *, job_type: JobType = None) -> int:
    """Pause a named queue (or, with --type, a job type): every worker stops claiming its jobs
    within a second, running jobs finish, and the pause holds through restarts until resumed.

    Parameters
    ----------
    queue
        The named queue to pause (`default`, `critical`, ...).
    job_type
        Pause this job type on every queue instead.
    """
    changed = run_on_backend(lambda backend: _pauses(backend).pause(**_target(queue, job_type)))
    what = _what(queue, job_type)
    say(f"paused {what}" if changed else f"{what} was paused already")
    return 0


def resume(queue: str | None = None, /, *, job_type: JobType = None) -> int:
    """Resume a paused named queue (or, with --type, a job type); exit 1 if it was not paused.

    Parameters
    ----------
    queue
        The named queue to resume.
    job_type
        Resume this job type instead.
    """
    changed = run_on_backend(lambda backend: _pauses(backend).resume(**_target(queue, job_type)))
    what = _what(queue, job_type)
    say(f"resumed {what}" if changed else f"{what} was not paused")
    return 0 if changed else NO


def paused(*, as_json: Json = False) -> int:
    """List the paused named queues and job types.

    Parameters
    ----------
    as_json
        Print one JSON object ({"queues": [...], "types": [...]}) instead of lines.
    """
    now = run_on_backend(lambda backend: _pauses(backend).paused())
    if as_json:
        print(json.dumps({"queues": sorted(now.queues), "types": sorted(now.types)}))
        return 0
    for name in sorted(now.queues):
        say(f"queue {name}")
    for name in sorted(now.types):
        say(f"type  {name}")
    if not (now.queues or now.types):
        say("nothing is paused")
    return 0


def _pauses(backend: Backend) -> Pauses:
    if backend.pauses is None:
        raise CliError("this queue backend cannot pause queues", USAGE)
    return backend.pauses


def _target(queue: str | None, job_type: str | None) -> dict[str, str | None]:
    if (queue is None) == (job_type is None):
        raise CliError("name either a queue or a --type", USAGE)
    return {"queue": queue, "job_type": job_type}


def _what(queue: str | None, job_type: str | None) -> str:
    return f"queue {queue}" if queue is not None else f"type {job_type}"


async def _stats(backend: Backend, queue: str | None) -> tuple[QueueCounts, Paused | None]:
    counts = await backend.stats.stats(queue=queue)
    held = None if backend.pauses is None else await backend.pauses.paused()
    return counts, held


def _as_dict(counts: QueueCounts, held: Paused | None) -> dict[str, object]:
    age = counts.oldest_ready_age
    shown: dict[str, object] = {
        "ready": counts.ready,
        "scheduled": counts.scheduled,
        "leased": counts.leased,
        "dead": counts.dead,
        "oldest_ready_age_seconds": None if age is None else round(age.total_seconds(), 3),
    }
    if held is not None:
        shown["paused"] = {"queues": sorted(held.queues), "types": sorted(held.types)}
    return shown


def _table(counts: QueueCounts, held: Paused | None) -> str:
    age = counts.oldest_ready_age
    # Ready jobs without an age: the backend cannot tell (SQS keeps it for CloudWatch).
    waited = (
        "-" if not counts.ready else "unknown" if age is None else f"{age.total_seconds():.1f} s"
    )
    rows = [
        ("ready", str(counts.ready)),
        ("scheduled", str(counts.scheduled)),
        ("leased", str(counts.leased)),
        ("dead", str(counts.dead)),
        ("oldest ready waited", waited),
    ]
    if held is not None:
        rows.append(("paused queues", ", ".join(sorted(held.queues)) or "-"))
        rows.append(("paused types", ", ".join(sorted(held.types)) or "-"))
    return "\n".join(f"{name:<20}{value:>10}" for name, value in rows)
