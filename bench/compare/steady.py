"""Scenario 2: steady state, one enqueuer process (batches of 10, flat out) + the worker."""

from __future__ import annotations

import argparse

import anyio

from bench.compare import harness
from bench.compare.enqueuer import EnqueuerProcess, running
from bench.compare.report import Metric, Ratio
from bench.compare.run_pgqueuer import asyncpg_installed
from bench.compare.server import BenchServer
from bench.compare.systems import Variant, open_system

METRICS = (
    Metric("completed_per_s", "completed jobs/s"),
    Metric("enqueued_per_s", "enqueued jobs/s"),
    Metric("backlog", "backlog at end"),
    Metric("jobs_per_cpu_s", "completed per worker CPU-s"),
)
RATIOS = (
    Ratio("ours", "pgqueuer", "completed_per_s"),
    Ratio("ours", "pgqueuer/asyncpg", "completed_per_s"),
    Ratio("ours", "procrastinate", "completed_per_s"),
)


def variants() -> list[Variant]:
    """Batch 10, concurrency 20 (procrastinate: concurrency 20, one job per fetch)."""
    found = [
        Variant("ours", "ours"),
        Variant("pgqueuer", "pgqueuer"),
        Variant("procrastinate", "procrastinate", batch=1),
    ]
    if asyncpg_installed():
        found.append(Variant("pgqueuer/asyncpg", "pgqueuer", options={"driver": "asyncpg"}))
    return found


def build(args: argparse.Namespace) -> harness.Scenario:
    """30 s per run (2 s with --quick)."""
    seconds = 2.0 if args.quick else 30.0

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await steady(variant, url, server, seconds)

    return harness.Scenario(
        name="steady",
        title=f"Steady state for {seconds:.0f} s: one enqueuer (batches of 10) + one worker",
        variants=harness.available(variants()),
        run=run,
        metrics=METRICS,
        ratios=RATIOS,
        params={"seconds": seconds, "enqueue_batch": 10},
    )


async def steady(
    variant: Variant, url: str, server: BenchServer, seconds: float
) -> dict[str, float]:
    """Completions inside the window from the first enqueue; backlog once the enqueuer stopped."""
    counter = harness.Countdown(10**12)
    async with open_system(variant, url) as system:
        await system.install()
        with running(EnqueuerProcess(variant, url, seconds, rate=None)) as enqueuer:
            await enqueuer.start()
            async with system.work(counter, batch=variant.batch, concurrency=variant.concurrency):
                meter = harness.Meter(server)
                enqueuer.go()
                await anyio.sleep(seconds)
                completed, measured = counter.count, meter.read()
                backlog = await system.remaining()
                enqueued = await enqueuer.enqueued()
    return {
        "completed_per_s": completed / measured["wall_s"],
        "enqueued_per_s": enqueued / seconds,
        "backlog": float(backlog),
        "jobs_per_cpu_s": completed / max(measured["cpu_s"], 1e-9),
        **measured,
    }


if __name__ == "__main__":
    harness.main(build)
