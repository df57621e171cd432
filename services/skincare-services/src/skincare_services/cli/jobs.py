"""`skincare jobs cancel ID [--queue Q]`: remove a waiting or scheduled job before it runs; `list`
and `show` find jobs and their timelines (`job_history.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cyclopts import App

from skincare_services.cli import job_history
from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import NO
from skincare_services.cli.options import QueueName
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend


def register(app: App) -> None:
    """Add `jobs` and its commands to the `skincare` app."""
    jobs = App(name="jobs", help="Find jobs, show a job's timeline, cancel jobs not yet run.")
    jobs.command(job_history.list_jobs, name="list")
    jobs.command(job_history.show)
    jobs.command(cancel)
    app.command(jobs)


def cancel(job_id: str, /, *, queue: QueueName = None) -> int:
    """Remove a waiting or scheduled job so it never runs; exit 1 if there was none to remove.

    A running job is not interrupted: it finishes (or fails) as it would have, and this says
    there was nothing to cancel.

    Parameters
    ----------
    job_id
        The job's id.
    queue
        The job's named queue (default: look in the shop's queues and the configured ones).
    """
    names = [queue] if queue else _known_queues()
    found = run_on_backend(lambda backend: _cancel(backend, job_id), queues=names)
    if found is None:
        say(f"no waiting or scheduled job {job_id}: it ran, runs now, or never existed")
        return NO
    say(f"cancelled job {job_id} (queue {found})")
    return 0


def _known_queues() -> list[str]:
    from skincare_core.shop.job_types import SHOP_ROUTES
    from skincare_services.startup import settings_or_exit

    configured = settings_or_exit("cli").worker_queues
    return list(dict.fromkeys([*SHOP_ROUTES.names, *configured]))


async def _cancel(backend: Backend, job_id: str) -> str | None:
    for name, queue in backend.queues.items():
        if await queue.cancel(job_id):
            return name
    return None
