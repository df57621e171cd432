"""`skincare queue stats`: the jobs counted by state, of every named queue or (`--queue`) of one,
for people, scripts and alarms."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cyclopts import App

from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.options import Json, QueueName

if TYPE_CHECKING:
    from skincare_core.jobs.ports import QueueCounts


def register(app: App) -> None:
    """Add `queue` and its commands to the `skincare` app."""
    queue = App(name="queue", help="Look at the job queue.")
    queue.command(stats)
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
    counts = run_on_backend(lambda backend: backend.stats.stats(queue=queue))
    print(json.dumps(_as_dict(counts)) if as_json else _table(counts))
    return 0


def _as_dict(counts: QueueCounts) -> dict[str, int | float | None]:
    age = counts.oldest_ready_age
    return {
        "ready": counts.ready,
        "scheduled": counts.scheduled,
        "leased": counts.leased,
        "dead": counts.dead,
        "oldest_ready_age_seconds": None if age is None else round(age.total_seconds(), 3),
    }


def _table(counts: QueueCounts) -> str:
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
    return "\n".join(f"{name:<20}{value:>10}" for name, value in rows)
