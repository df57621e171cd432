"""What a concurrency cap costs the drain on SQS (moto's HTTP server), the caps counted in the
job ledger's database: the Worker draining no-op jobs with no cap, with a cap in use that
never binds (every receive then starts its jobs through the capped start: lock, count, drop
tombstones, start with the cap rows, in one transaction), with a cap that binds (10 running
at once, the held-back jobs sent back), and with a cap on another job type only (the received
batches meet no cap and start as without caps).

Run: `uv run python -m bench.sqs_cap_cost [--quick] [--jobs N] [--reps N]`. Uses
SKINCARE_BENCH_DATABASE_URL when set, otherwise starts an embedded PostgreSQL in a temporary
directory; a fresh moto server per run. One worker of concurrency 20 receiving batches of 10;
the variants alternate, each rep in turn. The table gives medians, the cost per job against no
cap (1 / rate - 1 / rate without) and the SQS requests a job (counted on the boto3 client);
jobs/s is moto's, not SQS's (moto slows as its queue grows: compare within a run). A second
table times what the cap adds in the ledger's database alone: the start of a received batch of
ten, the plain statement without caps against the capped start's transaction; a third, the
plain start's statement alone as shipped and as it was before it reported stray copies.
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
from datetime import timedelta
from typing import Any

import anyio
import boto3
import psycopg
from moto.server import ThreadedMotoServer
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs import Envelope, Job, Message, Router, Worker, new_job
from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_postgres import PostgresJobLedger, create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs import ledger_sql
from skincare_sqs import MAX_DELAY, ensure_queues, sqs_backend
from skincare_sqs.client import Sender

VARIANTS = {
    "no cap": NO_CAPS,
    "cap in use, never full (type:noop=1000)": ConcurrencyCaps(types={"noop": 1000}),
    "cap of 10 (type:noop=10)": ConcurrencyCaps(types={"noop": 10}),
    "a cap on another type only (type:mail=2)": ConcurrencyCaps(types={"mail": 2}),
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
            await _enqueue(ledger, Sender(client, urls[QUEUES[0]].queue_url), jobs)
            counts.clear()
            elapsed = await _drained(backend.queue(), jobs)
    finally:
        await engine.dispose()
    return jobs / elapsed, sum(counts.values()) / jobs


async def _enqueue(ledger: PostgresJobLedger, sender: Sender, jobs: int) -> None:
    # Each job's ledger row, then its message, ten a SendMessageBatch: a received job's row is
    # what its caps are counted on.
    for start in range(0, jobs, 10):
        batch = [Envelope(new_job("noop", n=str(n))) for n in range(start, start + 10)]
        receipts = [await ledger.add(e, due=None, send_now=True) for e in batch]
        await sender.send_many(batch)
        await ledger.mark_sent([receipt for receipt in receipts if receipt is not None])


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


async def start_cost(url: str, caps: ConcurrencyCaps, batches: int) -> float:
    """Microseconds a job that the ledger's start of a received batch of ten takes: the plain
    start without caps, the capped start's transaction with them (every job fits)."""
    engine = create_engine(url, pool_size=5)
    ledger = PostgresJobLedger(engine, window=MAX_DELAY, history=False)
    spent = 0.0
    try:
        async with engine.begin() as conn:
            await conn.execute(text("TRUNCATE jobs, job_cap_leases"))
        for _ in range(batches):
            batch = [Envelope(new_job("noop")) for _ in range(10)]
            receipts = [await ledger.add(e, due=None, send_now=True) for e in batch]
            await ledger.mark_sent([receipt for receipt in receipts if receipt is not None])
            began = time.perf_counter()
            await _start(ledger, caps, [(e.job.id, e.job.type) for e in batch])
            spent += time.perf_counter() - began
            await ledger.finish([Message("r", e.job, 1) for e in batch], queue=QUEUES[0])
    finally:
        await engine.dispose()
    return spent / (batches * 10) * 1e6


# The plain start's statement as shipped and as it was before it reported stray copies (a row
# dead or back in the outbox): what that check costs, each run alone on one connection.
STATEMENTS = {
    "plain start statement, as shipped": ledger_sql.START,
    "plain start statement, before the stray check": ledger_sql.START.split("\nUNION ALL")[0],
}


async def statement_cost(url: str, statement: str, batches: int) -> float:
    """Microseconds a job that `statement` takes to start a sent batch of ten, on one autocommit
    connection."""
    engine = create_engine(url, pool_size=5)
    ledger = PostgresJobLedger(engine, window=MAX_DELAY, history=False)
    spent = 0.0
    try:
        async with await psycopg.AsyncConnection.connect(
            libpq_conninfo(url), autocommit=True
        ) as conn:
            await conn.execute("TRUNCATE jobs, job_cap_leases")
            for _ in range(batches):
                batch = [Envelope(new_job("noop")) for _ in range(10)]
                receipts = [await ledger.add(e, due=None, send_now=True) for e in batch]
                await ledger.mark_sent([receipt for receipt in receipts if receipt is not None])
                began = time.perf_counter()
                await conn.execute(statement, {"ids": [e.job.id for e in batch]})
                spent += time.perf_counter() - began
                await ledger.finish([Message("r", e.job, 1) for e in batch], queue=QUEUES[0])
    finally:
        await engine.dispose()
    return spent / (batches * 10) * 1e6


async def _start(
    ledger: PostgresJobLedger, caps: ConcurrencyCaps, jobs: list[tuple[str, str]]
) -> None:
    if caps:
        lease = timedelta(seconds=30)
        await ledger.start_capped(jobs, queue=QUEUES[0], caps=caps, lease=lease)
    else:
        await ledger.start([job_id for job_id, _ in jobs])


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
    args = _arguments()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's request log
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        runs = _measure(url, args.jobs, args.reps)
        starts: dict[str, list[float]] = {name: [] for name in list(VARIANTS)[:2]}
        statements: dict[str, list[float]] = {name: [] for name in STATEMENTS}
        for _ in range(args.reps):
            for name in starts:
                starts[name].append(anyio.run(start_cost, url, VARIANTS[name], args.batches))
            for name, statement in STATEMENTS.items():
                cost = anyio.run(statement_cost, url, statement, args.batches)
                statements[name].append(cost)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    _report(runs, args.jobs, args.reps)
    _report_starts(starts, args.batches)
    _report_statements(statements, args.batches)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batches", type=int, default=300, help="received batches of ten")
    parser.add_argument("--quick", action="store_true", help="100 jobs, 30 batches, one rep")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.batches, args.reps = 100, 30, 1
    return args


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


def _report_starts(starts: dict[str, list[float]], batches: int) -> None:
    print(f"\n## The ledger's start of a received batch of ten ({batches} batches)\n")
    print("| variant | us a job (runs) | more than no cap |")
    print("| --- | --- | --- |")
    base = statistics.median(starts["no cap"])
    for name, runs in starts.items():
        each = ", ".join(f"{r:,.0f}" for r in runs)
        median = statistics.median(runs)
        print(f"| {name} | {median:,.0f} ({each}) | {median - base:+,.0f} us |")


def _report_statements(statements: dict[str, list[float]], batches: int) -> None:
    print(f"\n## The plain start's statement alone ({batches} batches of ten)\n")
    print("| statement | us a job (runs) |")
    print("| --- | --- |")
    for name, runs in statements.items():
        each = ", ".join(f"{r:,.1f}" for r in runs)
        print(f"| {name} | {statistics.median(runs):,.1f} ({each}) |")


if __name__ == "__main__":
    main()
