"""An SQS endpoint that hangs (connect or read timeout) surfaces as SqsUnavailable too."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import new_job
from skincare_sqs import SqsQueue, SqsUnavailable

pytestmark = pytest.mark.anyio


def _hanging_listener(backlog: int) -> tuple[socket.socket, list[socket.socket]]:
    """A listener that never accepts; with backlog 0 its queue is filled, so connects hang."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(backlog)
    fillers: list[socket.socket] = []
    if backlog == 0:
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            # Non-blocking connects land in the accept queue (or wait on it): that fills it.
            filler.connect_ex(server.getsockname())
            fillers.append(filler)
        time.sleep(0.1)
    return server, fillers


@pytest.fixture(params=[0, 16], ids=["connect-timeout", "read-timeout"])
def hanging_endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    """http://127.0.0.1:<port> where a connect hangs (full backlog) or a reply never comes."""
    server, fillers = _hanging_listener(request.param)
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        for sock in (*fillers, server):
            sock.close()


async def test_a_hanging_endpoint_raises_sqs_unavailable(hanging_endpoint: str) -> None:
    client: Any = boto3.client(
        "sqs",
        endpoint_url=hanging_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(connect_timeout=0.5, read_timeout=0.5, retries={"max_attempts": 1}),
    )
    url = f"{hanging_endpoint}/000000000000/hung"
    queue = SqsQueue(client, queue_url=url, dlq_url=url + "-dlq", wait_time_seconds=0)
    with pytest.raises(SqsUnavailable, match="Timeout"):
        await enqueue(queue, new_job("hung"))
