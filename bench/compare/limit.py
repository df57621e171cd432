"""Drain against the practical limit: our Worker next to a bare psycopg claim/delete loop.

`uv run --group bench python -m bench.compare.limit [--quick] [--typed] [--history-off]
[--history-floor]`: 20,000
no-op jobs at batch 10 and 50 (our concurrency 2 x batch), 3 runs each, alternating; the ratio
ours / bare is the share of the database's practical limit the engine reaches. `--typed` adds
ours serving a typed definition (`JobDefinition`: the payload structured into an attrs class per
job) beside ours with a plain handler, so the cost of typed decoding is read side by side.
`--history-off` adds ours without the job history beside each, and the ratio of ours with it to
ours without. `--history-floor` (bringing `--history-off`) adds ours keeping each finished job's
history row with none of job_history's indexes: the least a kept history costs the drain, found
by no search, and its ratio to ours without history.
"""

from __future__ import annotations

import argparse

from bench.compare import harness
from bench.compare.drain import drain
from bench.compare.report import Metric, Ratio
from bench.compare.server import BenchServer
from bench.compare.systems import Variant

BATCHES = (10, 50)
METRICS = (
    Metric("jobs_per_s", "jobs/s"),
    Metric("jobs_per_cpu_s", "jobs per worker CPU-s"),
    Metric("server_cpu_s", "server CPU-s", ".2f"),
    Metric("wall_s", "wall s", ".2f"),
)
RATIOS = tuple(
    Ratio(f"ours b{batch}", f"bare b{batch}", key)
    for key in ("jobs_per_s", "jobs_per_cpu_s")
    for batch in BATCHES
)


HISTORY_RATIOS = tuple(
    Ratio(f"ours b{batch}", f"ours nohist b{batch}", "jobs_per_s") for batch in BATCHES
)
FLOOR_RATIOS = tuple(
    Ratio(f"ours rowonly b{batch}", f"ours nohist b{batch}", "jobs_per_s") for batch in BATCHES
)


def variants(
    *, typed: bool = False, history_off: bool = False, history_floor: bool = False
) -> list[Variant]:
    """The bare loop and ours at each batch; ours runs 2 x batch jobs at once as in drain.
    With `typed`, ours serving a typed definition too; with `history_off`, ours without the
    history too; with `history_floor`, ours keeping history rows with no index too."""
    found = []
    for batch in BATCHES:
        found += [
            Variant(f"bare b{batch}", "bare", batch=batch, concurrency=1),
            Variant(f"ours b{batch}", "ours", batch=batch, concurrency=2 * batch),
        ]
        if typed:
            options = {"typed": True}
            found.append(Variant(f"typed b{batch}", "ours", batch, 2 * batch, options))
        if history_off:
            options = {"history": False}
            found.append(Variant(f"ours nohist b{batch}", "ours", batch, 2 * batch, options))
        if history_floor:
            options = {"history_indexes": False}
            found.append(Variant(f"ours rowonly b{batch}", "ours", batch, 2 * batch, options))
    return found


TYPED_RATIOS = tuple(
    Ratio(f"typed b{batch}", f"ours b{batch}", key)
    for key in ("jobs_per_s", "jobs_per_cpu_s")
    for batch in BATCHES
)


def build(args: argparse.Namespace) -> harness.Scenario:
    """20,000 jobs (2,000 with --quick)."""
    jobs = 2_000 if args.quick else 20_000
    # The floor is read against ours without history, so it brings that variant too.
    history_off = args.history_off or args.history_floor
    chosen = variants(typed=args.typed, history_off=history_off, history_floor=args.history_floor)

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        return await drain(variant, url, server, jobs)

    return harness.Scenario(
        name="limit",
        title=f"Drain {jobs:,} no-op jobs: ours against a bare psycopg loop",
        variants=harness.available(chosen),
        run=run,
        metrics=METRICS,
        ratios=RATIOS
        + (TYPED_RATIOS if args.typed else ())
        + (HISTORY_RATIOS if history_off else ())
        + (FLOOR_RATIOS if args.history_floor else ()),
        params={"jobs": jobs, "batches": list(BATCHES), "typed": args.typed},
    )


if __name__ == "__main__":
    harness.main(
        build,
        {
            "typed": "also run ours serving a typed definition",
            "history-off": "also run ours with the job history off",
            "history-floor": "also run ours keeping history rows without indexes",
        },
    )
