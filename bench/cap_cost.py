"""What a concurrency cap costs the drain: the Worker draining no-op jobs on Postgres with no
cap, with a cap on another job type only (the claims pass capped rows by and meet none), with a
cap in use that never binds (every claim of the queue then runs the capped claim: lock, count,
claim, record), and with a cap that binds (10 running at once).

Run: `uv run python -m bench.cap_cost [--quick] [--jobs N] [--reps N]`. Uses
SKINCARE_BENCH_DATABASE_URL when set, otherwise starts an embedded PostgreSQL in a temporary
directory. One worker of
concurrency 20 claiming batches of 10; the variants alternate, each rep in turn; the table
gives medians and the cost per job against no cap (1 / rate - 1 / rate without).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import timedelta

import anyio
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs import Envelope, Job, Router, Worker, new_job
from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_postgres import create_engine, postgres_backend, upgrade

VARIANTS = {
    "no cap": NO_CAPS,
    "a cap on another type only (type:mail=2)": ConcurrencyCaps(types={"mail": 2}),
    "cap in use, never full (type:noop=1000)": ConcurrencyCaps(types={"noop": 1000}),
    "cap of 10 (type:noop=10)": ConcurrencyCaps(types={"noop": 10}),
}


async def drain(url: str, caps: ConcurrencyCaps, jobs: int) -> float:
    """Jobs per second draining `jobs` no-op jobs under `caps`."""
    engine = create_engine(url, pool_size=5)
    done = anyio.Event()
    count = 0

    async def noop(_job: Job) -> None:
        nonlocal count
        count += 1
        if count == jobs:
            done.set()

    router = Router()
    router.register("noop", noop)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("TRUNCATE jobs, job_cap_leases"))
        async with postgres_backend(engine, caps=caps) as backend:
            for start in range(0, jobs, 1000):
                batch = [Envelope(new_job("noop", n=str(n))) for n in range(start, start + 1000)]
                await backend.sink.enqueue_many(batch)
            worker = Worker(
                queue=backend.queue(),
                router=router,
                concurrency=20,
                shutdown_grace=timedelta(seconds=2),
            )
            began = time.perf_counter()
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                await done.wait()
                elapsed = time.perf_counter() - began
                tg.cancel_scope.cancel()
    finally:
        await engine.dispose()
    return jobs / elapsed


def main() -> None:
    """Run every variant `--reps` times, alternating; print the medians and the cost a job."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="500 jobs, one rep")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.reps = 500, 1
    rates: dict[str, list[float]] = {name: [] for name in VARIANTS}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        for _ in range(args.reps):
            for name, caps in VARIANTS.items():
                rates[name].append(anyio.run(drain, url, caps, args.jobs))
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    base = statistics.median(rates["no cap"])
    print(f"## Drain {args.jobs:,} no-op jobs, concurrency 20, batch 10 (median of {args.reps})\n")
    print("| variant | jobs/s (runs) | vs no cap | cost a job |")
    print("| --- | --- | --- | --- |")
    for name, runs in rates.items():
        rate = statistics.median(runs)
        each = ", ".join(f"{r:,.0f}" for r in runs)
        cost = (1 / rate - 1 / base) * 1e6
        print(f"| {name} | {rate:,.0f} ({each}) | {rate / base:.2f}x | {cost:+.0f} us |")


if __name__ == "__main__":
    main()
