"""`skincare jobs cancel ID [--queue Q]`: remove a waiting or scheduled job before it runs;
`skincare jobs run-now ID`: run a scheduled or retrying job now. Each takes `--preview` to show
the job as it stands and change nothing. (A dead job goes back with `skincare dlq redrive ID`.)
`list` and `show` find jobs and their timelines (`job_history.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cyclopts import App, Parameter

from skincare_services.cli import job_history
from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import NO, USAGE, CliError
from skincare_services.cli.options import QueueName
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend
    from skincare_core.jobs.steering import JobActions, JobView

Preview = Annotated[bool, Parameter(name="--preview")]
"""`--preview`: show the job as it stands and what the command would do; change nothing."""


def register(app: App) -> None:
    """Add `jobs` and its commands to the `skincare` app."""
    jobs = App(name="jobs", help="Find jobs, show a job's timeline, cancel jobs not yet run.")
    jobs.command(job_history.list_jobs, name="list")
    jobs.command(job_history.show)
    jobs.command(cancel)
    jobs.command(run_now, name="run-now")
    app.command(jobs)


def run_now(job_id: str, /, *, preview: Preview = False) -> int:
    """Run a scheduled job, or one waiting out a retry's backoff, now (its attempts kept); exit 1
    if the job is in no state to (ready, running, dead, unknown, or held by SQS itself).

    Parameters
    ----------
    job_id
        The job's id.
    preview
        Show the job and whether it can run now; change nothing.
    """
    view, done = run_on_backend(lambda backend: _act(backend, job_id, "run_now", preview))
    _show(job_id, view)
    if preview:
        return 0 if view is not None and view.can_run_now else NO
    say(f"job {job_id} runs now" if done else f"job {job_id} cannot be run now")
    return 0 if done else NO


def cancel(job_id: str, /, *, queue: QueueName = None, preview: Preview = False) -> int:
    """Remove a waiting or scheduled job so it never runs; exit 1 if there was none to remove.

    A running job is not interrupted: it finishes (or fails) as it would have, and this says
    there was nothing to cancel.

    Parameters
    ----------
    job_id
        The job's id.
    queue
        The job's named queue (default: look in the shop's queues and the configured ones).
    preview
        Show the job and whether it can be cancelled; change nothing.
    """
    if preview:
        view, _ = run_on_backend(lambda backend: _act(backend, job_id, "cancel", True))
        _show(job_id, view)
        return 0 if view is not None and view.can_cancel else NO
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


async def _act(
    backend: Backend, job_id: str, action: str, preview: bool
) -> tuple[JobView | None, bool]:
    actions = _actions(backend)
    view = await actions.find(job_id)
    if preview or view is None:
        return view, False
    return view, await (actions.run_now if action == "run_now" else actions.cancel)(job_id)


def _actions(backend: Backend) -> JobActions:
    if backend.actions is None:
        raise CliError("this queue backend cannot act on waiting jobs", USAGE)
    return backend.actions


def _show(job_id: str, view: JobView | None) -> None:
    if view is None:
        say(f"no job {job_id} waits, runs or is dead")
        return
    due = "-" if view.due_at is None else view.due_at.isoformat(timespec="seconds")
    say(
        f"job {view.job.id}: type {view.job.type}, queue {view.queue}, {view.state}, "
        f"attempts {view.attempts}, due {due}"
    )
