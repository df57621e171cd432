"""`skincare ops` as a real child process on the Postgres backend: operators in, others out."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import psycopg
import pytest
from sqlalchemy.engine import make_url

from skincare_postgres import upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_services.local import free_port

TOKEN = "ops-command-token-long-enough-for-32-bytes"


def _database(postgres_url: str) -> str:
    name = f"skincare_ops_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq_conninfo(postgres_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    return url


def _status(url: str, token: str | None) -> int:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            _status(url, None)
            return
        except urllib.error.URLError:
            time.sleep(0.1)
    pytest.fail("skincare ops did not start")


@pytest.mark.slow
def test_skincare_ops_serves_the_page_to_operators_only(postgres_url: str) -> None:
    port = free_port()
    env = {
        **os.environ,
        "SKINCARE_DATABASE_URL": _database(postgres_url),
        "SKINCARE_JWT_SECRET": "j" * 40,
        "SKINCARE_WEBHOOK_SECRET": "w",
        "SKINCARE_OPS_TOKEN": TOKEN,
    }
    process = subprocess.Popen(["skincare", "ops", "--port", str(port)], env=env)
    try:
        url = f"http://127.0.0.1:{port}/ops/"
        _wait_up(url, process)
        assert (_status(url, TOKEN), _status(url, None), _status(url, "x" * 10)) == (200, 401, 401)
    finally:
        process.terminate()
        process.wait(10)
