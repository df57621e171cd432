"""A database that is not there gives DatabaseUnavailable quickly, never a hang."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from skincare_core.jobs.errors import Unavailable
from skincare_postgres import (
    DatabaseUnavailable,
    PostgresDatabase,
    PostgresDeadLetters,
    PostgresQueue,
    create_engine,
)

pytestmark = pytest.mark.anyio


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _dead_urls(tmp_path: Path) -> list[str]:
    return [
        f"postgresql+psycopg://postgres@/postgres?host={tmp_path}",
        f"postgresql+psycopg://postgres@127.0.0.1:{_free_port()}/postgres",
    ]


async def test_unit_of_work_and_ping_raise_database_unavailable(tmp_path: Path) -> None:
    for url in _dead_urls(tmp_path):
        engine = create_engine(url)
        db = PostgresDatabase(engine)
        with anyio.fail_after(5):
            with pytest.raises(DatabaseUnavailable):
                await db.ping()
            with pytest.raises(DatabaseUnavailable):
                async with db() as uow:
                    await uow.users.get(1)
        await engine.dispose()


async def test_queue_operations_raise_database_unavailable(tmp_path: Path) -> None:
    for url in _dead_urls(tmp_path):
        engine = create_engine(url)
        async with PostgresQueue(engine) as queue:
            with anyio.fail_after(5):
                with pytest.raises(DatabaseUnavailable):
                    await queue.receive(10)
                with pytest.raises(DatabaseUnavailable):
                    await PostgresDeadLetters(engine).count()
        await engine.dispose()


async def test_database_unavailable_is_cores_unavailable_error(tmp_path: Path) -> None:
    # The HTTP edge answers 503 for core's Unavailable without knowing this adapter.
    engine = create_engine(_dead_urls(tmp_path)[0])
    with anyio.fail_after(5), pytest.raises(Unavailable):
        await PostgresDatabase(engine).ping()
    await engine.dispose()
