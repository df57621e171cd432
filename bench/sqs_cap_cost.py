"""What a concurrency cap costs the drain on SQS (moto's HTTP server), the caps counted in the
job ledger's database: the Worker draining no-op jobs with no cap, with a cap in use that
never binds (every receive then starts its jobs through the capped start: lock, count, drop
tombstones, start with the cap rows, in one transaction), and with a cap that binds (10 running
at once, the held-back jobs sent back).

Run: `uv run python -m bench.sqs_cap_cost [--quick] [--jobs N] [--reps N]`. Uses
SKINCARE_BENCH_DATABASE_URL when set, otherwise starts an embedded PostgreSQL in a temporary
directory; a fresh moto server per run. One worker of concurrency 20 receiving batches of 10;
the variants alternate, each rep in turn. The table gives medians, the cost per job against no
cap (1 / rate - 1 / rate without) and the SQS requests a job (counted on the boto3 client);
jobs/s is moto's, not SQS's.
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import boto3
from moto.server import ThreadedMotoServer
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs import Envelope, Job, Router, Worker, new_job
from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_postgres import PostgresJobLedger, create_engine, upgrade
from skincare_sqs import MAX_DELAY, ensure_queues, sqs_backend

VARIANTS = {
    "no cap": NO_CAPS,
    "cap in use, never full (type:noop=1000)": ConcurrencyCaps(types={"noop": 1000}),
    "cap of 10 (type:noop=10)": ConcurrencyCaps(types={"noop": 10}),
}
QUEUES = ("default",)


def _counting(counts: collections.Counter[str]) -> Callable[..., None]:
    def count(event_name: str, **_: object) -> None:
        counts[event_name.rsplit(".", 1)[-1]] += 1

    return count


async def drain(url: str, endpoint: str, caps: ConcurrencyCaps, jobs: int) -> tuple[float, float]:
    """(jobs per second, SQS requests a job) draining `jobs` no-op jobs under `caps`."""
    engine = create_engine(url, pool_size=5)
    client = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    counts: collections.Counter[str] = collections.Counter()
    client.meta.events.register("before-send.sqs", _counting(counts))
    urls = ensure_queues(client, f"bench-{uuid.uuid4().hex[:8]}", QUEUES)
    ledger = PostgresJobLedger(engine, window=MAX_DELAY, history=False)
    opened = sqs_backend(
        client, urls=urls, ledger=ledger, queues=QUEUES, wait_time_seconds=1, caps=caps
    )
    try:
        async with engine.begin() as conn:
            await conn.execute(text("TRUNCATE jobs, job_cap_leases"))
        async with opened as backend:
            for start in range(0, jobs, 10):
                batch = [Envelope(new_job("noop", n=str(n))) for n in range(start, start + 10)]
                await backend.sink.enqueue_many(batch)
            counts.clear()
            elapsed = await _drained(backend.queue(), jobs)
    finally:
        await engine.dispose()
    return jobs / elapsed, sum(counts.values()) / jobs


async def _drained(queue: Any, jobs: int) -> float:
    done = anyio.Event()
    count = 0

    async def noop(_job: Job) -> None:
        nonlocal count
        count += 1
        if count == jobs:
            done.set()

    router = Router()
    router.register("noop", noop)
    worker = Worker(queue=queue, router=router, concurrency=20, receive_batch=10)
    began = time.perf_counter()
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        await done.wait()
        elapsed = time.perf_counter() - began
        tg.cancel_scope.cancel()
    return elapsed


def _measure(url: str, jobs: int, reps: int) -> dict[str, list[tuple[float, float]]]:
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for _ in range(reps):
        for name, caps in VARIANTS.items():
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
            host, port = server.get_host_and_port()
            try:
                runs[name].append(anyio.run(drain, url, f"http://{host}:{port}", caps, jobs))
            finally:
                server.stop()
    return runs


def main() -> None:
    """Run every variant `--reps` times, alternating; print the medians and the cost a job."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100 jobs, one rep")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.reps = 100, 1
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's request log
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        runs = _measure(url, args.jobs, args.reps)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    _report(runs, args.jobs, args.reps)


def _report(runs: dict[str, list[tuple[float, float]]], jobs: int, reps: int) -> None:
    base = statistics.median(rate for rate, _ in runs["no cap"])
    print(
        f"## Drain {jobs:,} no-op jobs on SQS (moto), concurrency 20, batch 10 (median of {reps})\n"
    )
    print("| variant | jobs/s (runs) | vs no cap | cost a job | SQS requests a job |")
    print("| --- | --- | --- | --- | --- |")
    for name, measured in runs.items():
        rate = statistics.median(r for r, _ in measured)
        requests = statistics.median(q for _, q in measured)
        each = ", ".join(f"{r:,.0f}" for r, _ in measured)
        cost = (1 / rate - 1 / base) * 1e6
        print(
            f"| {name} | {rate:,.0f} ({each}) | {rate / base:.2f}x | {cost:+.0f} us"
            f" | {requests:.2f} |"
        )


if __name__ == "__main__":
    main()
