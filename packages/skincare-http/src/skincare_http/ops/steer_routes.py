"""The ops page's levers on jobs that have not run: pause and resume a named queue or a job type,
find a job by id, and run a waiting job now or cancel it, previewed by a GET and confirmed by a
POST (the app's CSRF check covers every POST)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from litestar import get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import Body, FromQuery
from litestar.response import Redirect, Template

from skincare_core.jobs.history import JOB_STATES, HistoryQuery, InvalidHistoryQuery
from skincare_core.jobs.ops import OpsService, SteeringUnavailable

Ops = NamedDependency[OpsService]
Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
ACTIONS = {"run-now": "Run now", "cancel": "Cancel"}
# Longer than any id we issue by far; a longer one names no job (and costs no lookup).
_LONGEST_ID = 512


def known_id(job_id: str) -> str:
    """`job_id` if some store could hold it; 404 otherwise (a NUL, an absurd length)."""
    if not job_id or "\0" in job_id or len(job_id) > _LONGEST_ID:
        raise NotFoundException("no such job")
    return job_id


def job_path(job_id: str) -> str:
    """The job page's path, the id quoted whole (a `/` in it stays in one segment)."""
    return f"/ops/jobs/{quote(job_id, safe='')}"


def _target(data: dict[str, str]) -> dict[str, str | None]:
    queue, job_type = data.get("queue") or None, data.get("type") or None
    if (queue is None) == (job_type is None) or "\0" in (queue or job_type or ""):
        raise ClientException("name either a queue or a job type")
    return {"queue": queue, "job_type": job_type}


@post("/pause")
async def pause(ops: Ops, data: Form) -> Redirect:
    """Pause the named queue or job type on every worker."""
    try:
        await ops.pause(**_target(data))
    except SteeringUnavailable as exc:
        raise NotFoundException(str(exc)) from None
    return Redirect("/ops/?changed=paused")


@post("/resume")
async def resume(ops: Ops, data: Form) -> Redirect:
    """Resume the named queue or job type."""
    try:
        await ops.resume(**_target(data))
    except SteeringUnavailable as exc:
        raise NotFoundException(str(exc)) from None
    return Redirect("/ops/?changed=resumed")


# Search words naming a field of the query; any other `key=value` is an argument.
_FIELDS = {"id": "job_id", "type": "job_type", "state": "state", "queue": "queue"}


def parse_search(text: str) -> HistoryQuery:
    """A search box's words as a query: `type=T`, `state=S`, `queue=Q`, `id=I`, any other
    `key=value` an argument (`order_id=123`), a bare word a job id. InvalidHistoryQuery for a
    word it cannot use."""
    fields: dict[str, str] = {}
    args: dict[str, str] = {}
    for word in text.split():
        key, equals, value = word.partition("=")
        if not equals:
            key, value = "id", word
        if not key or not value or "\0" in word:
            raise InvalidHistoryQuery(f"cannot search for {word!r}: use key=value")
        if key in _FIELDS:
            fields[_FIELDS[key]] = value
        else:
            args[key] = value
    state = fields.get("state")
    known = next((s for s in JOB_STATES if s == state), None)
    if state is not None and known is None:
        raise InvalidHistoryQuery(f"unknown job state {state!r} (one of {', '.join(JOB_STATES)})")
    return HistoryQuery(
        job_id=fields.get("job_id"),
        job_type=fields.get("job_type"),
        state=known,
        queue=fields.get("queue"),
        args=args,
    )


@get("/find")
async def find(ops: Ops, q: FromQuery[str | None] = None) -> Redirect | Template:
    """The search box: one bare word opens that job's page; `type=`, `state=`, `queue=` and
    arguments (`order_id=123`) list the jobs the history finds, newest first."""
    wanted = (q or "").strip()
    if not wanted:
        return Redirect("/ops/")
    if len(wanted.split()) == 1 and "=" not in wanted:
        return Redirect(job_path(wanted))
    try:
        query = parse_search(wanted)
    except InvalidHistoryQuery as exc:
        refused: dict[str, object] = {"q": wanted, "problem": str(exc), "found": []}
        return Template("search.html", context=refused, status_code=400)
    found = await ops.search(query)
    context: dict[str, object] = {
        "q": wanted,
        "problem": None,
        "found": found,
        "searchable": ops.searchable,
    }
    return Template("search.html", context=context)


@get("/act")
async def act_preview(ops: Ops, action: FromQuery[str], job_id: FromQuery[str]) -> Template:
    """The job as it stands and what the action would do, with the button that confirms it."""
    if action not in ACTIONS:
        raise NotFoundException("no such action")
    view = await ops.job(known_id(job_id))
    if view is None:
        raise NotFoundException("no such job")
    possible = view.can_run_now if action == "run-now" else view.can_cancel
    context = {"action": action, "label": ACTIONS[action], "view": view, "possible": possible}
    return Template("act_preview.html", context=context)


@post("/run-now")
async def run_now(ops: Ops, data: Form) -> Redirect:
    """Run the confirmed job now."""
    job_id = known_id(data.get("job_id", ""))
    try:
        done = await ops.run_now(job_id)
    except SteeringUnavailable as exc:
        raise NotFoundException(str(exc)) from None
    return Redirect(f"{job_path(job_id)}?ran={int(done)}")


@post("/cancel")
async def cancel(ops: Ops, data: Form) -> Redirect:
    """Cancel the confirmed job."""
    job_id = known_id(data.get("job_id", ""))
    try:
        done = await ops.cancel(job_id)
    except SteeringUnavailable as exc:
        raise NotFoundException(str(exc)) from None
    return Redirect(f"/ops/?cancelled={int(done)}")


STEER_ROUTES = [pause, resume, find, act_preview, run_now, cancel]
