"""Benchmark of SqsQueue on moto's HTTP server: jobs/s and SQS requests per job, batch 1 vs 10.

Run: `uv run python -m bench.sqs_queue [--quick]`. Starts its own ThreadedMotoServer on a free
127.0.0.1 port; each run drains a fresh queue through core's Worker with a no-op handler.
moto's receive costs time linear in the queue's length, so N stays in the hundreds.
"""

from __future__ import annotations

import argparse
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anyio
import boto3

from bench.noop_drain import drain_seconds
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import new_job
from skincare_sqs import SqsQueue, ensure_queue

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

Row = tuple[str, str, str, str]


@contextmanager
def moto_client() -> Iterator[SQSClient]:
    """A boto3 SQS client on a fresh moto server, stopped on exit."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield boto3.client(
            "sqs",
            endpoint_url=f"http://{host}:{port}",
            region_name="us-east-1",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
        )
    finally:
        server.stop()


class RequestCounter:
    """Counts SQS requests through botocore's before-send hook."""

    def __init__(self, client: SQSClient) -> None:
        self.count = 0
        client.meta.events.register("before-send.sqs", self._seen)

    def _seen(self, **_: object) -> None:
        self.count += 1


async def drain(client: SQSClient, count: int, batch: int) -> Row:
    """Enqueue `count` no-op jobs; drain them through one Worker (16 slots) at receive `batch`."""
    urls = ensure_queue(client, f"bench-{uuid.uuid4().hex[:8]}", visibility_timeout=30)
    queue = SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1)
    await queue.enqueue_many([Envelope(new_job("noop", n=str(n))) for n in range(count)])
    counter, requests = RequestCounter(client), 0

    def count_requests() -> None:
        nonlocal requests
        requests = counter.count  # before the stop: its receives are not the drain's

    elapsed = await drain_seconds(queue, count, concurrency=16, batch=batch, on_done=count_requests)
    client.meta.events.unregister("before-send.sqs", counter._seen)
    return (f"batch {batch}", f"{count:,}", f"{count / elapsed:,.0f}", f"{requests / count:.2f}")


async def run(client: SQSClient, quick: bool) -> list[Row]:
    """Batch 1 and batch 10, side by side."""
    count = 100 if quick else 400
    return [await drain(client, count, batch) for batch in (1, 10)]


def main() -> None:
    """Parse arguments, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts (a smoke run)")
    args = parser.parse_args()
    with moto_client() as client:
        rows = anyio.run(run, client, args.quick)
    header = ("receive batch", "jobs", "jobs/s", "SQS requests/job (drain)")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
