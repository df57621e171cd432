"""Drain pre-enqueued no-op jobs, ours against pgqueuer and procrastinate: jobs/s and jobs per
CPU-second."""

from __future__ import annotations

import argparse

from bench.compare import harness
from bench.compare.report import Metric, Ratio
from bench.compare.run_pgqueuer import asyncpg_installed
from bench.compare.server import BenchServer
from bench.compare.systems import Variant, open_system

METRICS = (
    Metric("jobs_per_s", "jobs/s"),
    Metric("jobs_per_cpu_s", "jobs per worker CPU-s"),
    Metric("jobs_per_total_cpu_s", "jobs per CPU-s (worker + server)"),
    Metric("wall_s", "wall s", ".2f"),
)


def variants() -> list[Variant]:
    """Ours and pgqueuer at batch 10 and 50 (concurrency 2x batch); procrastinate has no batch."""
    found = []
    for batch in (10, 50):
        found += [
            Variant(f"ours b{batch}", "ours", batch=batch, concurrency=2 * batch),
            Variant(f"pgqueuer b{batch}", "pgqueuer", batch=batch, concurrency=2 * batch),
        ]
        if asyncpg_installed():
            options = {"driver": "asyncpg"}
            label = f"pgqueuer/asyncpg b{batch}"
            found.append(Variant(label, "pgqueuer", batch, 2 * batch, options))
        if batch == 10:
            found.append(Variant("procrastinate c20", "procrastinate", batch=1, concurrency=20))
    return found


RATIOS = (
    Ratio("ours b10", "pgqueuer b10", "jobs_per_s"),
    Ratio("ours b10", "pgqueuer/asyncpg b10", "jobs_per_s"),
    Ratio("ours b50", "pgqueuer/asyncpg b50", "jobs_per_s"),
    Ratio("ours b50", "pgqueuer b50", "jobs_per_s"),
    Ratio("ours b10", "procrastinate c20", "jobs_per_s"),
    Ratio("ours b10", "pgqueuer b10", "jobs_per_cpu_s"),
    Ratio("ours b50", "pgqueuer b50", "jobs_per_cpu_s"),
    Ratio("ours b10", "procrastinate c20", "jobs_per_cpu_s"),
)


def build(args: argparse.Namespace) -> harness.Scenario:
    """50,000 jobs (procrastinate 5,000: at ~300/s 50,000 would take minutes per run)."""
    jobs = 1_000 if args.quick else 50_000
    slow_jobs = 100 if args.quick else 5_000

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        count = slow_jobs if variant.system == "procrastinate" else jobs
        return await drain(variant, url, server, count)

    return harness.Scenario(
        name="drain",
        title=f"Drain {jobs:,} pre-enqueued no-op jobs (procrastinate {slow_jobs:,})",
        variants=harness.available(variants()),
        run=run,
        metrics=METRICS,
        ratios=RATIOS,
        params={"jobs": jobs, "procrastinate_jobs": slow_jobs},
    )


async def drain(variant: Variant, url: str, server: BenchServer, jobs: int) -> dict[str, float]:
    """Pre-enqueue `jobs`, then time from the worker's start to the last job's ack."""
    noop = harness.Countdown(jobs)
    async with open_system(variant, url) as system:
        await system.install()
        await harness.pre_enqueue(system, jobs)
        meter = harness.Meter(server)
        async with system.work(noop, batch=variant.batch, concurrency=variant.concurrency):
            await noop.done.wait()
            await harness.wait_empty(system)
            measured = meter.read()
    return {**harness.throughput(jobs, measured), "jobs": float(jobs)}


if __name__ == "__main__":
    harness.main(build)
