"""The ops page's handlers: each renders a view of the OpsService or calls one of its actions.

Every action that changes state is a POST (the app's CSRF check covers them all); a preview is
a GET that moves nothing and offers the confirming POST.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import unquote

from litestar import Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import (
    ClientException,
    NotAuthorizedException,
    NotFoundException,
    PermissionDeniedException,
    TooManyRequestsException,
)
from litestar.params import Body, FromQuery
from litestar.response import Redirect, Template
from litestar.types import Scope

from skincare_core.jobs.ops import OpsService, Selection
from skincare_core.jobs.outcomes import RECENT
from skincare_http.ops.operator import COOKIE, OperatorGuard, client_address
from skincare_http.ops.steer_routes import STEER_ROUTES, known_id

JOBS = "/ops/jobs/"
LIVE_SCRIPT = (Path(__file__).parent / "live.js").read_text(encoding="utf-8")
Ops = NamedDependency[OpsService]
Guard = NamedDependency[OperatorGuard]
Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]


def job_id_in_path(scope: Scope) -> str:
    """The job id a `/ops/jobs/<quoted id>` path names, from the path as sent: the decoded path
    has lost which `/` were `%2F`. A literal `?` starts a query some servers leave in it."""
    raw = (scope.get("raw_path") or scope["path"].encode()).partition(b"?")[0]
    return unquote(raw.partition(JOBS.encode())[2].decode("latin-1"), encoding="utf-8")


def _selected_id(job_id: str | None) -> str | None:
    """The job id of a selection (empty: none); 400 for one no store can hold (a NUL)."""
    if job_id and "\0" in job_id:
        raise ClientException("a job id cannot contain NUL")
    return job_id or None


@get("/")
async def overview(ops: Ops) -> Template:
    """Each named queue's depth and jobs finished lately, what is paused, the hour's trends,
    and the dead letters by error."""
    return Template("overview.html", context=await _overview_context(ops))


@get("/live")
async def live(ops: Ops) -> Template:
    """The overview's live part alone (queues, paused state, the hour's charts): what the
    page's script swaps in every few seconds."""
    return Template("live.html", context=await _overview_context(ops))


@get("/live.js", media_type="text/javascript")
async def live_script() -> str:
    """The page's one script, served by the page itself (no CDN, no build)."""
    return LIVE_SCRIPT


async def _overview_context(ops: OpsService) -> dict[str, object]:
    minutes = int(RECENT.total_seconds() // 60)
    return {"view": await ops.overview(), "recent_minutes": minutes}


@get("/jobs/{quoted:path}")
async def dead_job(ops: Ops, request: Request[object, object, State]) -> Template:
    """One job (its id quoted whole in the path): a dead one's type, payload, attempts, error
    and when it died; a waiting or running one's state, with run-now and cancel where they
    apply. 404 for any id no job has (a NUL or an absurd length included)."""
    # No store holds an id with a NUL (PostgreSQL refuses one in text): no such job.
    job_id = known_id(job_id_in_path(request.scope))
    record = await ops.record(job_id)
    item = await ops.dead_job(job_id)
    if item is not None:
        return Template("job.html", context={"dead": item, "record": record})
    view = await ops.job(job_id)
    if view is None and record is None:
        raise NotFoundException("no such job")
    return Template("waiting_job.html", context={"view": view, "record": record})


@get("/preview")
async def preview(
    ops: Ops, action: FromQuery[str], job_id: FromQuery[str | None], error: FromQuery[str | None]
) -> Template:
    """What a redrive (or purge) would move, with the button that confirms it."""
    selection = Selection(job_id=_selected_id(job_id), error=error)
    moving = await ops.preview(Selection() if action == "purge" else selection)
    context = {"action": action, "selection": selection, "moving": moving}
    return Template("preview.html", context=context)


@post("/redrive")
async def redrive(ops: Ops, data: Form) -> Redirect:
    """Send the confirmed selection back to its queues."""
    selection = Selection(job_id=_selected_id(data.get("job_id")), error=data.get("error"))
    moved = await ops.redrive(selection)
    return Redirect(f"/ops/?moved={moved}")


@post("/purge")
async def purge(ops: Ops) -> Redirect:
    """Delete every dead job, once confirmed."""
    deleted = await ops.purge()
    return Redirect(f"/ops/?purged={deleted}")


@get("/sign-in")
async def sign_in_form() -> Template:
    """A form for the operator's token (a browser sends no Authorization header of its own)."""
    return Template("sign_in.html")


@post("/sign-in")
async def sign_in(
    guard: Guard, request: Request[object, object, State], data: Form
) -> Response[None] | Template:
    """Check the token, then keep it in an HttpOnly cookie that the guard checks on every later
    request; a token that does not let an operator in shows the form again (401, 403, or 429
    while the client is locked out)."""
    token = data.get("token", "")
    try:
        guard.check(token, client_address(request.client))
    except (NotAuthorizedException, PermissionDeniedException, TooManyRequestsException) as refused:
        context = {"refused": refused.detail}
        return Template("sign_in.html", context=context, status_code=refused.status_code)
    response = Redirect("/ops/")
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/ops")
    return response


@post("/sign-out")
async def sign_out() -> Response[None]:
    """Forget the operator's token: the session cookie is cleared."""
    response = Redirect("/ops/sign-in")
    response.delete_cookie(COOKIE, path="/ops")
    return response


OPERATOR_ROUTES = [overview, live, live_script, dead_job, preview, redrive, purge, *STEER_ROUTES]
SIGN_IN_ROUTES = [sign_in_form, sign_in, sign_out]
