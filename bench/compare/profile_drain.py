"""Where ours spends a drain: pyinstrument over one drain through Worker + PostgresQueue.

`uv run --group bench python -m bench.compare.profile_drain [--jobs N] [--batch B]`
"""

from __future__ import annotations

import argparse

import anyio
from pyinstrument import Profiler

from bench.compare import harness
from bench.compare.server import bench_server
from bench.compare.systems import Variant, open_system


async def profile(jobs: int, batch: int) -> str:
    """Drain `jobs` at `batch` (concurrency 2 x batch) under the profiler; its text report."""
    variant = Variant("ours", "ours", batch=batch, concurrency=2 * batch)
    countdown = harness.Countdown(jobs)
    with bench_server() as server:
        async with server.fresh_database("profile") as url, open_system(variant, url) as system:
            await system.install()
            await harness.pre_enqueue(system, jobs)
            profiler = Profiler(interval=0.0005, async_mode="disabled")
            meter = harness.Meter(server)
            profiler.start()
            async with system.work(countdown, batch=batch, concurrency=2 * batch):
                await countdown.done.wait()
                await harness.wait_empty(system)
                measured = harness.throughput(jobs, meter.read())
            profiler.stop()
    figures = ", ".join(f"{k}={v:,.4g}" for k, v in sorted(measured.items()))
    return f"{figures}\n{profiler.output_text(unicode=False, color=False)}"


def main() -> None:
    """Print the measured figures (slowed by the profiler) and the call tree."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    print(anyio.run(profile, args.jobs, args.batch))


if __name__ == "__main__":
    main()
