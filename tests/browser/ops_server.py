"""The ops app served by uvicorn on a free port in a thread, and the Debian Chromium binary."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from litestar import Litestar

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
