"""`skincare dev` stops everything it started on SIGTERM and SIGHUP, as it does on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from skincare_services.local import free_port, wait_for

pytestmark = pytest.mark.slow


def children_of(pid: int) -> set[int]:
    """Every living descendant of `pid` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        # As a new server binds it (uvicorn too): a closed connection's TIME_WAIT is no user.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def run_dev_until(signum: signal.Signals, home: Path, log: Path) -> None:
    """Start `skincare dev`, wait until it serves, send `signum`; check nothing it started lives."""
    port = free_port()
    with log.open("wb") as out:
        command = ["dev", "--home", str(home), "--port", str(port)]
        dev = subprocess.Popen(
            [sys.executable, "-m", "skincare_services.cli.main", *command],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        started = wait_for(lambda: dev.poll() is not None or ready(port), 120, interval=0.2)
        assert started, log.read_text()
        assert dev.poll() is None, log.read_text()
        children = children_of(dev.pid)
        postmaster = int((home / "pg" / "postmaster.pid").read_text().split()[0])
        dev.send_signal(signum)
        dev.wait(timeout=60)
    finally:
        if dev.poll() is None:
            dev.kill()
    assert dev.returncode == 0, log.read_text()
    assert [pid for pid in children | {postmaster} if alive(pid)] == []
    assert port_is_free(port)
    assert not (home / "pg" / "postmaster.pid").exists()


def test_sigterm_and_sighup_stop_every_child_and_free_the_port(tmp_path: Path) -> None:
    home = tmp_path / "dev"
    run_dev_until(signal.SIGTERM, home, tmp_path / "first.log")
    # A pid that died holding the server, as a killed `skincare dev` leaves behind, must not
    # keep the next run's clean exit from stopping PostgreSQL.
    (home / "pg" / ".handle_pids.json").write_text(json.dumps([2**22 + 1]))
    run_dev_until(signal.SIGHUP, home, tmp_path / "second.log")
