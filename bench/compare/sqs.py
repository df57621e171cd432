"""SQS requests per job: ours on SQS (moto's HTTP server), enqueue then drain at receive batch 1
and 10, and at batch 10 with jobs that outlive half the visibility timeout (so the heartbeat
renews their leases). Requests are counted on the boto3 client; jobs/s is moto's, not SQS's.

`uv run --group bench python -m bench.compare.sqs [--quick]`
"""

from __future__ import annotations

import argparse
import collections
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

import anyio
import boto3
from moto.server import ThreadedMotoServer

from bench.compare import harness
from bench.compare.report import Metric
from bench.compare.server import BenchServer
from bench.compare.systems import Variant
from skincare_core.jobs import Envelope, Job, Router, Worker, enqueue, new_job
from skincare_sqs import SqsQueue, ensure_queue

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.literals import QueueAttributeNameType

METRICS = (
    Metric("drain_jobs_per_s", "drain jobs/s"),
    Metric("drain_requests_per_job", "drain requests/job", ".2f"),
    Metric("enqueue_jobs_per_s", "enqueue jobs/s"),
    Metric("enqueue_requests_per_job", "enqueue requests/job", ".2f"),
    Metric("receives_per_job", "ReceiveMessage/job", ".2f"),
    Metric("deletes_per_job", "Delete*/job", ".2f"),
    Metric("extends_per_job", "ChangeVisibility*/job", ".2f"),
)
# Jobs of 3 s under a 2 s visibility: the heartbeat renews each lease two or three times.
_LONG = {"job_seconds": 3.0, "visibility_seconds": 2}


def build(args: argparse.Namespace) -> harness.Scenario:
    """1,000 jobs per run (40 with --quick); a fresh moto server per run."""
    jobs = 40 if args.quick else 1_000

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await sqs_run(variant, jobs)

    return harness.Scenario(
        name="sqs",
        title=f"SQS on moto: {jobs:,} no-op jobs, enqueue then drain",
        variants=harness.available(
            [
                Variant("ours sqs b1", "ours", batch=1, concurrency=2),
                Variant("ours sqs b10", "ours", batch=10, concurrency=20),
                Variant("ours sqs b10 3s jobs", "ours", batch=10, concurrency=100, options=_LONG),
            ]
        ),
        run=run,
        metrics=METRICS,
        params={"jobs": jobs, "wait_time_seconds": 1},
    )


async def sqs_run(variant: Variant, jobs: int) -> dict[str, float]:
    """Enqueue (SendMessage, or SendMessageBatch at b10), then drain with the Worker."""
    async with _moto() as endpoint:
        counts: collections.Counter[str] = collections.Counter()
        client = _client(endpoint)
        client.meta.events.register("before-send.sqs", _counting(counts))
        urls = await anyio.to_thread.run_sync(ensure_queue, _client(endpoint), "bench")
        queue = SqsQueue(
            client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1
        )
        all_jobs = [new_job("noop", n=str(n)) for n in range(jobs)]
        began = time.perf_counter()
        await _enqueue(queue, all_jobs, variant.batch)
        enqueue_s, sent = time.perf_counter() - began, sum(counts.values())
        counts.clear()
        drain_s = await _drain(queue, variant, jobs, _client(endpoint), urls.queue_url)
    deletes = counts["DeleteMessage"] + counts["DeleteMessageBatch"]
    extends = counts["ChangeMessageVisibility"] + counts["ChangeMessageVisibilityBatch"]
    return {
        "enqueue_jobs_per_s": jobs / enqueue_s,
        "enqueue_requests_per_job": sent / jobs,
        "drain_jobs_per_s": jobs / drain_s,
        "drain_requests_per_job": sum(counts.values()) / jobs,
        "receives_per_job": counts["ReceiveMessage"] / jobs,
        "deletes_per_job": deletes / jobs,
        "extends_per_job": extends / jobs,
    }


async def _enqueue(queue: SqsQueue, jobs: list[Job], batch: int) -> None:
    if batch == 1:
        for job in jobs:
            await enqueue(queue, job)
    else:
        for start in range(0, len(jobs), batch):
            await queue.enqueue_many([Envelope(job) for job in jobs[start : start + batch]])


async def _drain(queue: SqsQueue, variant: Variant, jobs: int, probe: SQSClient, url: str) -> float:
    countdown = harness.Countdown(jobs)
    router = Router()

    seconds = float(variant.options.get("job_seconds", 0))

    async def noop(job: Job) -> None:
        if seconds:
            await anyio.sleep(seconds)
        await countdown(job.payload)

    router.register("noop", noop)
    worker = Worker(
        queue=queue,
        router=router,
        concurrency=variant.concurrency,
        receive_batch=variant.batch,
        visibility_timeout=timedelta(seconds=variant.options.get("visibility_seconds", 30)),
        shutdown_grace=timedelta(seconds=5),
    )
    async with anyio.create_task_group() as tg:
        began = time.perf_counter()
        tg.start_soon(worker.run)
        await countdown.done.wait()
        while await anyio.to_thread.run_sync(_in_queue, probe, url):  # noqa: ASYNC110
            await anyio.sleep(0.005)
        elapsed = time.perf_counter() - began
        tg.cancel_scope.cancel()
    return elapsed


def _in_queue(client: SQSClient, url: str) -> int:
    names: list[QueueAttributeNameType] = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
    ]
    found = client.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(found[name]) for name in names)


def _counting(counts: collections.Counter[str]) -> Callable[..., None]:
    def count(event_name: str, **_: object) -> None:
        counts[event_name.rsplit(".", 1)[-1]] += 1

    return count


def _client(endpoint: str) -> SQSClient:
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@asynccontextmanager
async def _moto() -> AsyncIterator[str]:
    # A program, not a library: keep moto's per-request access log out of the table.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


if __name__ == "__main__":
    harness.main(build)
