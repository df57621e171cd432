"""`skincare ops` as a child process: one named queue's row of its page, as an operator sees it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from skincare_services.local import free_port

TOKEN = "e2e-ops-token-long-enough-for-32-bytes"
COLUMNS = ("ready", "scheduled", "leased", "dead", "done", "failed")


def _page(url: str) -> str | None:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return str(response.read().decode())
    except urllib.error.URLError:
        return None


def _wait_for_page(url: str, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        if (html := _page(url)) is not None:
            return html
        time.sleep(0.1)
    raise AssertionError("skincare ops did not serve its page")


@contextmanager
def ops_server(env: dict[str, str]) -> Iterator[str]:
    """`skincare ops` serving with `env` (and the ops token `TOKEN`) until the block ends;
    yields its base URL once it serves its page."""
    port = free_port()
    command = [sys.executable, "-m", "skincare_services.cli.main", "ops", "--port", str(port)]
    full = {**os.environ, **env, "SKINCARE_OPS_TOKEN": TOKEN}
    process = subprocess.Popen(command, env=full)
    try:
        _wait_for_page(f"http://127.0.0.1:{port}/ops/", process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def ops_row(env: dict[str, str], queue: str) -> dict[str, str]:
    """The counts in `queue`'s row of the page `skincare ops` serves with `env`, by column."""
    with ops_server(env) as base:
        html = _page(f"{base}/ops/")
    assert html is not None
    row = re.search(rf'<tr class="queue" data-queue="{queue}">(.*?)</tr>', html, re.DOTALL)
    assert row is not None, f"no row for queue {queue}"
    cells = dict(re.findall(r'<td class="(\w+)">([^<]*)</td>', row.group(1)))
    return {column: cells[column] for column in COLUMNS}
