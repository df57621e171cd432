"""Liveness and readiness probes."""

from __future__ import annotations

import logging

from litestar import Response, Router, get

from skincare_http import problems as p
from skincare_http.deps import Ready
from skincare_http.errors import NotReady
from skincare_http.views import Health
from skincare_http.wire import respond

logger = logging.getLogger(__name__)


@get("/healthz", responses=p.problem_responses(), tags=["health"])
async def healthz() -> Response[Health]:
    """The process is up."""
    return respond(Health(status="ok"))


@get("/readyz", responses=p.problem_responses(p.NOT_READY), tags=["health"])
async def readyz(readiness: Ready) -> Response[Health]:
    """The database answers; 503 otherwise."""
    try:
        await readiness.ping()
    except Exception as exc:
        logger.warning("http.not_ready", extra={"error": repr(exc)})
        raise NotReady("the database is unreachable") from exc
    return respond(Health(status="ready"))


router = Router("/", route_handlers=[healthz, readyz])
