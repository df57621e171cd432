"""Throughput against concurrency: 1 ms jobs with a backlog that never runs out, ours only.

`uv run --group bench python -m bench.compare.concurrency [--quick]`: concurrency 16, 64 and
256 at the default receive batch (10), 3 alternating runs each. 4,000 + 20,000 jobs are queued
before the clock starts and it stops at the 20,000th completion, so at least 4,000 jobs stay
queued throughout: every claim can come back full, and what limits the rate is the worker
and the database, not the supply.
"""

from __future__ import annotations

import argparse

import anyio

from bench.compare import harness
from bench.compare.report import Metric, Ratio
from bench.compare.server import BenchServer
from bench.compare.systems import Received, Variant, open_system

CONCURRENCIES = (16, 64, 256)
BACKLOG = 4_000
SLEEP_S = 0.001
METRICS = (
    Metric("jobs_per_s", "jobs/s"),
    Metric("pct_of_limit", "% of concurrency / 1 ms", ".1f"),
    Metric("jobs_per_cpu_s", "jobs per worker CPU-s"),
    Metric("server_cpu_s", "server CPU-s", ".2f"),
    Metric("wall_s", "wall s", ".2f"),
)
RATIOS = (
    Ratio("ours c64", "ours c16", "jobs_per_s"),
    Ratio("ours c256", "ours c16", "jobs_per_s"),
)


def variants() -> list[Variant]:
    """Ours at each concurrency, receive_batch 10 (the Worker's default)."""
    return [Variant(f"ours c{c}", "ours", batch=10, concurrency=c) for c in CONCURRENCIES]


def build(args: argparse.Namespace) -> harness.Scenario:
    """20,000 timed jobs (2,000 with --quick) behind a backlog of 4,000 (400)."""
    jobs = 2_000 if args.quick else 20_000
    backlog = BACKLOG // 10 if args.quick else BACKLOG

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await timed(variant, url, server, jobs, backlog)

    return harness.Scenario(
        name="concurrency",
        title=f"{jobs:,} jobs of {SLEEP_S * 1000:g} ms with {backlog:,} more always queued",
        variants=harness.available(variants()),
        run=run,
        metrics=METRICS,
        ratios=RATIOS,
        params={"jobs": jobs, "backlog": backlog, "sleep_s": SLEEP_S},
    )


async def timed(
    variant: Variant, url: str, server: BenchServer, jobs: int, backlog: int
) -> dict[str, float]:
    """Pre-enqueue jobs + backlog; time from the worker's start to the `jobs`-th completion."""
    countdown = harness.Countdown(jobs)

    async def sleep(payload: Received) -> None:
        await anyio.sleep(SLEEP_S)
        await countdown(payload)

    async with open_system(variant, url) as system:
        await system.install()
        await harness.pre_enqueue(system, jobs + backlog)
        meter = harness.Meter(server)
        async with system.work(sleep, batch=variant.batch, concurrency=variant.concurrency):
            await countdown.done.wait()
            measured = harness.throughput(jobs, meter.read())
    limit = variant.concurrency / SLEEP_S
    return {**measured, "pct_of_limit": 100 * measured["jobs_per_s"] / limit}


if __name__ == "__main__":
    harness.main(build)
