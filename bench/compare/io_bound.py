"""Scenario 4: I/O-bound jobs (the handler awaits 300 ms) at concurrency 100: jobs/s vs 333/s."""

from __future__ import annotations

import argparse

import anyio

from bench.compare import harness
from bench.compare.report import Metric, Ratio
from bench.compare.run_pgqueuer import asyncpg_installed
from bench.compare.server import BenchServer
from bench.compare.systems import Payload, Variant, open_system

SLEEP_S = 0.3
CONCURRENCY = 100
LIMIT = CONCURRENCY / SLEEP_S

METRICS = (
    Metric("jobs_per_s", "jobs/s"),
    Metric("pct_of_limit", f"% of {LIMIT:.0f}/s", ".1f"),
    Metric("jobs_per_cpu_s", "jobs per worker CPU-s"),
    Metric("wall_s", "wall s", ".2f"),
)
RATIOS = (
    Ratio("ours", "pgqueuer", "jobs_per_s"),
    Ratio("ours", "pgqueuer/asyncpg", "jobs_per_s"),
    Ratio("ours", "procrastinate", "jobs_per_s"),
)


def variants() -> list[Variant]:
    """Every system at concurrency 100, batch 10 where it batches."""
    found = [
        Variant("ours", "ours", batch=10, concurrency=CONCURRENCY),
        Variant("pgqueuer", "pgqueuer", batch=10, concurrency=CONCURRENCY),
        Variant("procrastinate", "procrastinate", batch=1, concurrency=CONCURRENCY),
    ]
    if asyncpg_installed():
        found.append(
            Variant("pgqueuer/asyncpg", "pgqueuer", 10, CONCURRENCY, {"driver": "asyncpg"})
        )
    return found


def build(args: argparse.Namespace) -> harness.Scenario:
    """2,000 jobs (200 with --quick)."""
    jobs = 200 if args.quick else 2_000

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await io_bound(variant, url, server, jobs)

    return harness.Scenario(
        name="io_bound",
        title=f"I/O-bound: {jobs:,} jobs of {SLEEP_S * 1000:.0f} ms, concurrency {CONCURRENCY}",
        variants=harness.available(variants()),
        run=run,
        metrics=METRICS,
        ratios=RATIOS,
        params={"jobs": jobs, "sleep_s": SLEEP_S, "concurrency": CONCURRENCY, "limit": LIMIT},
    )


async def io_bound(variant: Variant, url: str, server: BenchServer, jobs: int) -> dict[str, float]:
    """Pre-enqueue, then time from the worker's start to the last ack."""
    countdown = harness.Countdown(jobs)

    async def wait(payload: Payload) -> None:
        await anyio.sleep(SLEEP_S)
        await countdown(payload)

    async with open_system(variant, url) as system:
        await system.install()
        await harness.pre_enqueue(system, jobs)
        meter = harness.Meter(server)
        async with system.work(wait, batch=variant.batch, concurrency=variant.concurrency):
            await countdown.done.wait()
            await harness.wait_empty(system)
            measured = harness.throughput(jobs, meter.read())
    return {**measured, "pct_of_limit": 100 * measured["jobs_per_s"] / LIMIT}


if __name__ == "__main__":
    harness.main(build)
