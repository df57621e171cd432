"""A worker process for the SQS cap test: runs `capped` jobs of 200 ms under a cap for a while,
its job ledger (and the caps' count) in the database at URL, its queue on moto.

Usage: python -m tests.sqs.capped_worker URL PREFIX OUT CAPS SECONDS, with the AWS_* variables
of the moto server set, PREFIX the SQS queues' (`ensure_queues`), CAPS as
SKINCARE_CONCURRENCY_CAPS reads it. Each job's start and end times (time.time()) and id go to
OUT, one job a line.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta
from pathlib import Path

import anyio
import boto3

from skincare_core.jobs import Job, Router, Worker
from skincare_postgres import PostgresJobLedger, create_engine
from skincare_services.setting_values import parse_concurrency_caps
from skincare_sqs import MAX_DELAY, queue_urls, sqs_backend

WORK = 0.2
VISIBILITY = timedelta(seconds=10)
"""The queue's visibility timeout (`ensure_queues`), the worker's and each slot's lease."""
QUEUES = ("default",)


def _router(out: Path) -> Router:
    async def handle(job: Job) -> None:
        started = time.time()
        await anyio.sleep(WORK)
        with out.open("a") as file:
            file.write(f"{started} {time.time()} {job.id}\n")

    router = Router()
    router.register("capped", handle)
    return router


async def _main(url: str, prefix: str, out: Path, caps: str, seconds: float) -> None:
    engine = create_engine(url)
    client = boto3.client("sqs")
    urls = queue_urls(client, prefix, QUEUES)
    ledger = PostgresJobLedger(engine, window=MAX_DELAY)
    opened = sqs_backend(
        client,
        urls=urls,
        ledger=ledger,
        queues=QUEUES,
        wait_time_seconds=2,
        caps=parse_concurrency_caps(caps),
        cap_lease=VISIBILITY,
    )
    try:
        async with opened as backend:
            queue = backend.queue()
            worker = Worker(
                queue=queue, router=_router(out), concurrency=4, visibility_timeout=VISIBILITY
            )
            with anyio.move_on_after(seconds):
                await worker.run()
    finally:
        await engine.dispose()


if __name__ == "__main__":
    url, prefix, out, caps, seconds = sys.argv[1:6]
    anyio.run(_main, url, prefix, Path(out), caps, float(seconds))
