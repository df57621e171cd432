"""The ops app served by uvicorn on a free port in a thread, and the Debian Chromium binary."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from litestar import Litestar, MediaType, get

from skincare_services.local import free_port


def chromium_path() -> str:
    """The system Chromium; a missing browser fails the test (`.ci/run` installs it)."""
    path = shutil.which("chromium")
    assert path, "chromium is not installed: apt-get install chromium (.ci/run does)"
    return path


@contextmanager
def serving(app: Litestar) -> Iterator[str]:
    """`app` on 127.0.0.1 until the block ends; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the ops server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


ATTACK = """<!doctype html><title>attack</title>
<form id="attack" method="post"><input name="job_id"><input name="_csrf_token"></form>
<script>
const params = new URLSearchParams(location.search);
const form = document.getElementById("attack");
const cookie = document.cookie.split("; ").find((c) => c.startsWith("csrftoken="));
form.action = params.get("target") + "/ops/redrive";
form.job_id.value = params.get("job_id");
form._csrf_token.value = cookie ? cookie.slice("csrftoken=".length) : params.get("token");
form.submit();
</script>"""
FRAME = """<!doctype html><title>frame</title>
<iframe id="framed" width="800" height="600"
 onload="document.body.dataset.framed = 'loaded'"></iframe>
<script>
document.getElementById("framed").src = new URLSearchParams(location.search).get("src");
</script>"""


@get("/ops/attack", media_type=MediaType.HTML)
async def _attack() -> str:
    return ATTACK


@get("/ops/frame", media_type=MediaType.HTML)
async def _frame() -> str:
    return FRAME


def attacker_app() -> Litestar:
    """Pages another port of the same host serves, under /ops like the ops page's cookies:
    /ops/attack?target=&job_id=&token= posts a redrive of `job_id` to `target` with the CSRF
    cookie when a script can read it (else `token`); /ops/frame?src= frames `src`."""
    return Litestar(route_handlers=[_attack, _frame], openapi_config=None, logging_config=None)
