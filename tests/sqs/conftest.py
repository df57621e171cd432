"""SQS fixtures: a boto3 client on moto's real HTTP server, fresh queues per test, and a fresh
migrated database per test for the job ledger."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import boto3
import psycopg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_postgres import PostgresJobLedger, create_engine, upgrade
from skincare_sqs import MAX_DELAY, QueueUrls, ensure_queue, ensure_queues

Provision = Callable[..., QueueUrls]
ProvisionNamed = Callable[..., dict[str, QueueUrls]]


@pytest.fixture(scope="session")
def sqs_client(moto_endpoint: str) -> Any:
    """One thread-safe boto3 SQS client for the session, pointed at moto."""
    return boto3.client("sqs", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def fresh_queues(sqs_client: Any) -> Provision:
    """Provision a uniquely named queue + DLQ (visibility 1 s unless told)."""

    def provision(*, max_receive_count: int = 5, visibility_timeout: int = 1) -> QueueUrls:
        name = f"test-{uuid.uuid4().hex[:12]}"
        return ensure_queue(
            sqs_client,
            name,
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
        )

    return provision


@pytest.fixture
def fresh_named_queues(sqs_client: Any) -> ProvisionNamed:
    """Provision an SQS queue + DLQ per named queue under a unique prefix (visibility 1 s)."""

    def provision(
        queues: Iterable[str], *, visibility_timeout: int = 1, prefix: str = ""
    ) -> dict[str, QueueUrls]:
        prefix = prefix or f"test-{uuid.uuid4().hex[:12]}"
        return ensure_queues(sqs_client, prefix, queues, visibility_timeout=visibility_timeout)

    return provision


@pytest.fixture(scope="session")
def ledger_template(postgres_url: str) -> str:
    """A migrated database (per xdist worker) that each test's database is copied from."""
    name = f"sqs_template_{uuid.uuid4().hex[:8]}"
    _create_database(postgres_url, name)
    upgrade(_url_of(postgres_url, name))
    return name


@pytest.fixture
def database_url(postgres_url: str, ledger_template: str) -> str:
    """The URL of a fresh, migrated database of the session's server."""
    name = f"sqs_{uuid.uuid4().hex[:8]}"
    _create_database(postgres_url, name, template=ledger_template)
    return _url_of(postgres_url, name)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on the test's fresh database."""
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def ledger(engine: AsyncEngine) -> PostgresJobLedger:
    """The job ledger on the test's fresh database, its relay window SQS's 15 minutes."""
    return PostgresJobLedger(engine, window=MAX_DELAY)


def _url_of(postgres_url: str, database: str) -> str:
    return make_url(postgres_url).set(database=database).render_as_string(hide_password=False)


def _create_database(postgres_url: str, name: str, template: str | None = None) -> None:
    admin = make_url(postgres_url).set(drivername="postgresql")
    copy = "" if template is None else f' TEMPLATE "{template}"'
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
