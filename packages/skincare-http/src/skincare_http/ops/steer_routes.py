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


@get("/find")
async def find(q: FromQuery[str | None] = None) -> Redirect:
    """The search box: a job id opens that job's page."""
    wanted = (q or "").strip()
    if not wanted:
        return Redirect("/ops/")
    return Redirect(job_path(wanted))


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
