"""Bulk enqueue: `enqueue_many` of 10,000 jobs on PostgreSQL, plain, unique, delayed and spread
over three named queues, against the goal of 50,000 jobs/s.

Run: `uv run python -m bench.bulk_enqueue [--quick] [--runs N]`. Uses SKINCARE_BENCH_DATABASE_URL
when set, otherwise starts an embedded PostgreSQL in a temporary directory. Each run empties the
jobs table (outside the timing), then times building the envelopes (each checks and encodes its
job) and one `sink.enqueue_many` call: the one statement and its commit (durable,
`synchronous_commit` on). The shapes run in
alternation so the machine's load falls on each alike; the table gives the median and the best.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import anyio
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs import Envelope, encode_job, new_job
from skincare_postgres import create_engine, postgres_backend, upgrade

GOAL = 50_000.0
QUEUES = ("default", "critical", "bulk")
Shape = Callable[[int], Envelope]


def _plain(n: int) -> Envelope:
    return Envelope(new_job("bulk", order_id=str(n)))


def _unique(n: int) -> Envelope:
    return Envelope(new_job("bulk", order_id=str(n)), unique_key=f"order-{n}")


def _delayed(n: int) -> Envelope:
    later = datetime.now(UTC) + timedelta(minutes=5)
    return Envelope(new_job("bulk", order_id=str(n)), not_before=later)


def _named(n: int) -> Envelope:
    return Envelope(new_job("bulk", order_id=str(n)), queue=QUEUES[n % len(QUEUES)])


SHAPES: dict[str, Shape] = {
    "plain (default queue)": _plain,
    "each with a unique key": _unique,
    "each delayed 5 min": _delayed,
    "over 3 named queues": _named,
}


async def _runs(url: str, jobs: int, runs: int) -> dict[str, list[float]]:
    engine = create_engine(url, pool_size=2)
    seconds: dict[str, list[float]] = {label: [] for label in SHAPES}
    try:
        async with postgres_backend(engine, queues=QUEUES) as backend:
            for _ in range(runs):
                for label, shape in SHAPES.items():
                    async with engine.begin() as conn:
                        await conn.execute(text("TRUNCATE jobs"))
                    began = time.perf_counter()
                    # An envelope encodes its job when built: building them is part of enqueueing.
                    envelopes = [shape(n) for n in range(jobs)]
                    added = await backend.sink.enqueue_many(envelopes)
                    seconds[label].append(time.perf_counter() - began)
                    assert added == jobs, (label, added)
    finally:
        await engine.dispose()
    return seconds


def _encode_seconds(jobs: int) -> float:
    """What encoding alone costs a batch (the rest is the statement, its commit and the driver)."""
    envelopes = [_plain(n) for n in range(jobs)]
    began = time.perf_counter()
    for envelope in envelopes:
        encode_job(envelope.job)
    return time.perf_counter() - began


def table(seconds: dict[str, list[float]], jobs: int, encode_s: float) -> str:
    """The shapes as a Markdown table: median and best time of one call, and jobs/s at each."""
    head = ["shape", "median ms", "best ms", "jobs/s (median)", "jobs/s (best)", "goal"]
    runs = len(next(iter(seconds.values())))
    lines = [
        f"## enqueue_many of {jobs:,} jobs, one call each ({runs} runs)",
        "",
        _row(head),
        _row(["---"] * len(head)),
    ]
    for label, timings in seconds.items():
        median, best = statistics.median(timings), min(timings)
        verdict = "met" if jobs / median >= GOAL else "NOT met"
        cells = [f"{median * 1000:,.1f}", f"{best * 1000:,.1f}"]
        lines.append(_row([label, *cells, _rate(jobs, median), _rate(jobs, best), verdict]))
    lines.append(f"\nencode_job alone: {encode_s * 1000:,.1f} ms for {jobs:,} jobs")
    return "\n".join(lines)


def _rate(jobs: int, seconds: float) -> str:
    return f"{jobs / seconds:,.0f}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    """Parse arguments, time every shape on one server, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 jobs, 1 run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    jobs, runs = (1_000, 1) if args.quick else (10_000, args.runs)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        seconds = anyio.run(_runs, url, jobs, runs)
    encode_s = _encode_seconds(jobs)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print(table(seconds, jobs, encode_s))


if __name__ == "__main__":
    main()
