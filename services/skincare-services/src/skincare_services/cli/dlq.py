"""`skincare dlq`: list, show, count, redrive and purge dead jobs, alike on Postgres and SQS,
of every named queue or (`--queue`) of one."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal

from cyclopts import App, Group, Parameter, validators

from skincare_services.cli.backend import run_on_backend
from skincare_services.cli.errors import NO, CliError
from skincare_services.cli.options import JobType, Json, QueueName
from skincare_services.cli.output import say

if TYPE_CHECKING:
    from skincare_core.jobs.ports import DeadLetter, DeadLetters

WHICH = Group("Which dead jobs (exactly one)", validator=validators.LimitedChoice(1))
Count = Annotated[int, Parameter(validator=validators.Number(gte=0))]


def register(app: App) -> None:
    """Add `dlq` and its commands to the `skincare` app."""
    dlq = App(name="dlq", help="Inspect, count, redrive and purge dead jobs.")
    dlq.command(list_dead, name="list")
    for command in (show, count, redrive, purge):
        dlq.command(command)
    app.command(dlq)


def list_dead(
    *,
    job_type: JobType = None,
    queue: QueueName = None,
    group_by: Literal["error", "type", "queue"] | None = None,
    limit: Count = 100,
    as_json: Json = False,
) -> int:
    """List dead jobs, oldest first, then how many are dead.

    Parameters
    ----------
    job_type
        Only dead jobs of this type.
    queue
        Only dead jobs of this named queue.
    group_by
        Count the listed dead jobs by error, type or queue instead of listing each.
    limit
        List at most this many dead jobs.
    as_json
        Print a JSON array for scripts instead of lines for people (no total line).
    """
    dead, total = run_on_backend(
        lambda backend: _listing(backend.dead_letters, job_type, queue, limit)
    )
    if group_by:
        groups = Counter(_GROUPS[group_by](d) for d in dead)
        rows = [{group_by: value, "count": n} for value, n in groups.most_common()]
        lines = [f"{n:>6}  {value}" for value, n in groups.most_common()]
    else:
        rows = [{**_body(d), "dead_at": d.dead_at.isoformat()} for d in dead]
        lines = [_line(d) for d in dead]
    if as_json:
        # JSON's ASCII escapes keep it printable on any terminal, lone surrogates included.
        print(json.dumps(rows, indent=2))
        return 0
    for line in lines:
        say(line)
    print(f"{total} dead job(s)" + ("" if queue is None else f" in queue {queue}"))
    return 0


def show(job_id: str, /, *, as_json: Json = False) -> int:
    """Print one dead job in full, as JSON; exit 1 if no job of that id is dead.

    Parameters
    ----------
    job_id
        The dead job's id.
    as_json
        Accepted for scripts that pass it to every command: show always prints JSON.
    """
    item = run_on_backend(lambda backend: backend.dead_letters.get(job_id))
    if item is None:
        if as_json:  # a script's stdout stays JSON: empty, and the error goes to stderr
            raise CliError(f"no dead job {job_id}", NO)
        say(f"no dead job {job_id}")
        return NO
    print(json.dumps(_body(item), indent=2))
    return 0


def count(
    *,
    queue: QueueName = None,
    maximum: Annotated[Count | None, Parameter(name="--max")] = None,
    as_json: Json = False,
) -> int:
    """Print how many jobs are dead; with --max, an alarm for cron or CI.

    Parameters
    ----------
    queue
        Count only the dead jobs of this named queue.
    maximum
        Exit 1, saying so on stderr, when more than this many jobs are dead.
    as_json
        Print {"dead": N} instead of the bare number.
    """
    dead = run_on_backend(lambda backend: backend.dead_letters.count(queue=queue))
    print(json.dumps({"dead": dead}) if as_json else dead)
    if maximum is not None and dead > maximum:
        raise CliError(f"{dead} dead job(s), more than the maximum of {maximum}", NO)
    return 0


def redrive(
    job_id: Annotated[str | None, Parameter(group=WHICH)] = None,
    /,
    *,
    job_type: Annotated[str | None, Parameter(name="--type", group=WHICH)] = None,
    every: Annotated[bool, Parameter(name="--all", group=WHICH)] = False,
    queue: QueueName = None,
    dry_run: bool = False,
) -> int:
    """Send dead jobs back to the queue each died in, with their attempts reset.

    Parameters
    ----------
    job_id
        The one dead job to send back.
    job_type
        Send back every dead job of this type.
    every
        Send back every dead job.
    queue
        With --type or --all: only the dead jobs of this named queue.
    dry_run
        Only say how many jobs would be sent back.
    """
    if job_id is not None and queue is not None:
        raise CliError("--queue goes with --all or --type: a job id names one job")
    if dry_run:
        dead, _ = run_on_backend(
            lambda backend: _listing(backend.dead_letters, job_type, queue, 10_000)
        )
        print(f"would redrive {sum(job_id in (None, d.job.id) for d in dead)} job(s)")
        return 0
    if job_id is not None:
        found = run_on_backend(lambda backend: backend.dead_letters.redrive(job_id))
        say("redriven 1 job" if found else f"no dead job {job_id}")
        return 0 if found else NO
    moved = run_on_backend(
        lambda backend: backend.dead_letters.redrive_all(job_type=job_type, queue=queue)
    )
    print(f"redriven {moved} job(s)")
    return 0


def purge(*, yes: Annotated[bool, Parameter(name="--yes")]) -> int:
    """Delete every dead job.

    Parameters
    ----------
    yes
        Confirm the purge: without it nothing is deleted.
    """
    if not yes:
        raise CliError("purge deletes every dead job: confirm with --yes")
    print(f"purged {run_on_backend(lambda backend: backend.dead_letters.purge())} dead job(s)")
    return 0


async def _listing(
    dlq: DeadLetters, job_type: str | None, queue: str | None, limit: int
) -> tuple[list[DeadLetter], int]:
    listed = await dlq.list(job_type=job_type, queue=queue, limit=limit)
    return listed, await dlq.count(queue=queue)


_GROUPS: dict[str, Callable[[DeadLetter], str]] = {
    "error": lambda dead: dead.error,
    "type": lambda dead: dead.job.type,
    "queue": lambda dead: dead.queue,
}


def _body(dead: DeadLetter) -> dict[str, object]:
    job = dead.job
    payload = dict(job.payload)
    return {
        "id": job.id,
        "type": job.type,
        "queue": dead.queue,
        "payload": payload,
        "attempts": dead.attempts,
        "error": dead.error,
    }


def _line(dead: DeadLetter) -> str:
    # Dead jobs hold whatever was sent; `say` escapes what cannot be printed.
    when = dead.dead_at.isoformat(timespec="seconds")
    kind = f"{dead.job.type:<28} queue={dead.queue:<9}"
    return f"{dead.job.id}  {kind} attempts={dead.attempts}  {when}  {dead.error}"
