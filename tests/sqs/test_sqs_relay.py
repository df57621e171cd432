"""Core's OutboxRelay from the Postgres outbox to SqsQueue, across an SQS outage."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import anyio
import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.job import new_job
from skincare_core.jobs.relay import OutboxRelay
from skincare_postgres import PostgresDatabase, PostgresOutboxStorage
from skincare_sqs import SqsQueue, ensure_queue

pytestmark = pytest.mark.anyio


class RestartableMoto:
    """A moto server on a fixed free port that can be stopped and started again."""

    def __init__(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self._server: ThreadedMotoServer | None = None

    def start(self) -> None:
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


@pytest.fixture
def moto() -> Iterator[RestartableMoto]:
    server = RestartableMoto()
    server.start()
    yield server
    server.stop()


@pytest.mark.slow
async def test_jobs_committed_while_sqs_is_down_arrive_once_after_it_returns(
    moto: RestartableMoto, engine: AsyncEngine, moto_endpoint: str
) -> None:
    # moto_endpoint only for its AWS_* test credentials and region; this test has its own server.
    client = boto3.client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{moto.port}",
        config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 1}),
    )
    urls = ensure_queue(client, f"relay-{uuid.uuid4().hex[:8]}", visibility_timeout=30)
    sqs = SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=0)
    db = PostgresDatabase(engine)
    moto.stop()
    jobs = [new_job("relayed", n=str(n)) for n in range(25)]
    outbox = PostgresOutboxStorage(engine, lease=timedelta(seconds=1))
    relay = OutboxRelay(storage=outbox, sink=sqs, error_wait=timedelta(seconds=0.2))
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.run)
        for job in jobs:
            async with db() as uow:
                await uow.outbox.add(job)
        await anyio.sleep(1.5)
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT count(*) FROM jobs"))).scalar_one() == 25
        moto.start()
        received = await _receive_until(sqs, len(jobs), within=15)
        tg.cancel_scope.cancel()
    assert sorted(m.job.id for m in received) == sorted(job.id for job in jobs)
    assert await sqs.receive(10) == []


async def _receive_until(queue: SqsQueue, count: int, within: float) -> list[Any]:
    got: list[Any] = []
    with anyio.fail_after(within):
        while len(got) < count:
            got += await queue.receive(10)
            await anyio.sleep(0.05)
    return got


@pytest.mark.slow
async def test_a_failed_send_releases_its_rows_so_the_backlog_moves_soon_after_sqs_returns(
    moto: RestartableMoto, engine: AsyncEngine, moto_endpoint: str
) -> None:
    # The production lease and relay pauses: a row whose send failed is claimable again at
    # once, not after its lease, so the backlog moves as soon as SQS answers again.
    client = boto3.client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{moto.port}",
        config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 1}),
    )
    urls = ensure_queue(client, f"release-{uuid.uuid4().hex[:8]}", visibility_timeout=30)
    sqs = SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=0)
    db = PostgresDatabase(engine)
    jobs = [new_job("relayed", n=str(n)) for n in range(25)]
    moto.stop()
    lease = timedelta(seconds=30)
    outbox = PostgresOutboxStorage(engine, lease=lease)
    async with anyio.create_task_group() as tg:
        tg.start_soon(OutboxRelay(storage=outbox, sink=sqs).run)
        for job in jobs:
            async with db() as uow:
                await uow.outbox.add(job)
        await anyio.sleep(5)
        moto.start()
        returned = anyio.current_time()
        received = await _receive_until(sqs, len(jobs), within=25)
        moved_after = anyio.current_time() - returned
        tg.cancel_scope.cancel()
    assert sorted(m.job.id for m in received) == sorted(job.id for job in jobs)
    assert moved_after < 2.0, f"the backlog moved {moved_after:.1f} s after SQS returned"
