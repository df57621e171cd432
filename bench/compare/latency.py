"""Pickup latency at 10 jobs/s, enqueue call (commit included) -> handler start."""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from bench.compare import harness
from bench.compare.report import Metric, Ratio
from bench.compare.run_pgqueuer import asyncpg_installed
from bench.compare.server import BenchServer
from bench.compare.systems import Received, Variant, open_system

RATE = 10.0
METRICS = (
    Metric("p50_ms", "p50 ms", ".2f"),
    Metric("p99_ms", "p99 ms", ".2f"),
    Metric("max_ms", "max ms", ".2f"),
    Metric("after_commit_p50_ms", "p50 ms from commit return", ".2f"),
    Metric("after_commit_p99_ms", "p99 ms from commit return", ".2f"),
    Metric("jobs", "jobs"),
)
RATIOS = (
    Ratio("ours", "pgqueuer", "p50_ms"),
    Ratio("ours", "pgqueuer/asyncpg", "p50_ms"),
    Ratio("ours", "procrastinate", "p50_ms"),
    Ratio("ours", "pgqueuer", "p99_ms"),
    Ratio("ours", "procrastinate", "p99_ms"),
)


def variants() -> list[Variant]:
    """Every system with LISTEN/NOTIFY, and ours polling only (its poll interval: 1 s)."""
    found = [
        Variant("ours", "ours"),
        Variant("ours, notify off (poll 1 s)", "ours", options={"notify": False}),
        Variant("pgqueuer", "pgqueuer"),
        Variant("procrastinate", "procrastinate", batch=1),
    ]
    if asyncpg_installed():
        found.append(Variant("pgqueuer/asyncpg", "pgqueuer", options={"driver": "asyncpg"}))
    return found


def build(args: argparse.Namespace) -> harness.Scenario:
    """60 s at 10 jobs/s (1 s, 10 jobs, with --quick: enough to run every system once)."""
    seconds = 1.0 if args.quick else 60.0

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await pickup(variant, url, seconds)

    return harness.Scenario(
        name="latency",
        title=f"Pickup latency at {RATE:.0f} jobs/s for {seconds:.0f} s",
        variants=harness.available(variants()),
        run=run,
        metrics=METRICS,
        ratios=RATIOS,
        params={"rate_per_s": RATE, "seconds": seconds},
    )


async def pickup(variant: Variant, url: str, seconds: float) -> dict[str, float]:
    """Enqueue one job every 100 ms with its time in the payload; the handler records the delay.

    The delay runs from the enqueue call, so it includes the enqueue's commit (an fsync here);
    it is also measured from the moment that call returned, which is the pickup alone.
    """
    jobs = int(seconds * RATE)
    delays: list[float] = []
    started: dict[str, float] = {}
    committed: dict[str, float] = {}
    countdown = harness.Countdown(jobs)

    async def record(payload: Received) -> None:
        started[str(payload["n"])] = time.time()
        delays.append(started[str(payload["n"])] - float(str(payload["t"])))
        await countdown(payload)

    async with open_system(variant, url) as system:
        await system.install()
        async with system.work(record, batch=variant.batch, concurrency=variant.concurrency):
            await anyio.sleep(0.5)  # every worker has started and is listening
            start = time.perf_counter()
            for n in range(jobs):
                await anyio.sleep(max(0.0, start + n / RATE - time.perf_counter()))
                await system.enqueue([{"t": repr(time.time()), "n": str(n)}])
                committed[str(n)] = time.time()
            with anyio.fail_after(30):
                await countdown.done.wait()
    # A handler may start before the enqueuer resumes: those pickups count as 0 ms.
    pickups = [max(0.0, started[n] - committed[n]) for n in started]
    after = _percentiles(pickups)
    return _percentiles(delays) | {
        "after_commit_p50_ms": after["p50_ms"],
        "after_commit_p99_ms": after["p99_ms"],
    }


def _percentiles(delays: list[float]) -> dict[str, float]:
    ms = sorted(d * 1000 for d in delays)
    p99 = statistics.quantiles(ms, n=100, method="inclusive")[98] if len(ms) > 1 else ms[0]
    return {"p50_ms": statistics.median(ms), "p99_ms": p99, "max_ms": ms[-1], "jobs": len(ms)}


if __name__ == "__main__":
    harness.main(build)
