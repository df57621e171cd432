"""Scenario 5: ours at half its drain rate for 10 minutes, with and without a long transaction."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import psycopg

from bench.compare import harness
from bench.compare.drain import drain
from bench.compare.enqueuer import EnqueuerProcess, running
from bench.compare.report import Metric
from bench.compare.server import BenchServer
from bench.compare.systems import Payload, Variant, open_system

# The row-finding half of the claim of the `default` queue (the one the bench's jobs go to), in a
# transaction rolled back at once (it locks nothing long).
CLAIM_SCAN = (
    "SELECT id FROM jobs WHERE status = 'ready' AND queue = 'default' AND available_at <= now() "
    "ORDER BY available_at LIMIT 10 FOR UPDATE SKIP LOCKED"
)
DEAD_TUPLES = "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'jobs'"
METRICS = (
    Metric("rate_per_s", "offered jobs/s"),
    Metric("first_per_s", "first window jobs/s"),
    Metric("last_per_s", "last window jobs/s"),
    Metric("last_over_first", "last/first", ".3f"),
    Metric("scan_first_ms", "claim scan p50 first ms", ".2f"),
    Metric("scan_last_ms", "claim scan p50 last ms", ".2f"),
    Metric("dead_tuples_end", "dead tuples at end"),
    Metric("backlog", "backlog at end"),
)


def build(args: argparse.Namespace) -> harness.Scenario:
    """600 s per variant (14 s with --quick); the rate is half a calibration drain's."""
    seconds = 14.0 if args.quick else 600.0
    calibration_jobs = 2_000 if args.quick else 10_000
    rate: list[float] = []

    async def run(variant: Variant, url: str, server: BenchServer) -> dict[str, float]:
        if not rate:
            async with server.fresh_database("soak_calibrate") as scratch:
                calibration = await drain(
                    Variant("ours", "ours"), scratch, server, calibration_jobs
                )
            rate.append(calibration["jobs_per_s"] / 2)
        return await soak(variant, url, server, seconds, rate[0])

    return harness.Scenario(
        name="soak",
        title=f"Soak: ours at half its drain rate for {seconds:.0f} s",
        variants=harness.available(
            [
                Variant("ours", "ours"),
                Variant("ours + long transaction", "ours", options={"long_transaction": True}),
            ]
        ),
        run=run,
        metrics=METRICS,
        params={"seconds": seconds, "calibration_jobs": calibration_jobs},
        reps=1,
        quick_reps=1,
    )


async def soak(
    variant: Variant, url: str, server: BenchServer, seconds: float, rate: float
) -> dict[str, float]:
    """Paced enqueuer process + worker; per-second completions, claim scans, dead tuples."""
    done: list[float] = []
    scans: list[tuple[float, float]] = []

    async def record(payload: Payload) -> None:
        done.append(time.perf_counter())

    async with open_system(variant, url) as system:
        await system.install()
        with running(EnqueuerProcess(variant, url, seconds, rate=rate)) as enqueuer:
            await enqueuer.start()
            async with (
                _long_transaction(url, bool(variant.options.get("long_transaction"))),
                system.work(record, batch=variant.batch, concurrency=variant.concurrency),
            ):
                start = time.perf_counter()
                enqueuer.go()
                await _probe_claims(url, scans, until=start + seconds)
                backlog = await system.remaining()
                dead = await _dead_tuples(url)
            await enqueuer.enqueued()
    return _summary(done, scans, start, seconds, rate) | {
        "backlog": backlog,
        "dead_tuples_end": dead,
    }


def _summary(
    done: list[float], scans: list[tuple[float, float]], start: float, seconds: float, rate: float
) -> dict[str, float]:
    window = min(60.0, seconds / 4)
    first = sum(1 for t in done if t - start < window) / window
    last = sum(1 for t in done if seconds - window <= t - start < seconds) / window
    early = [ms for t, ms in scans if t - start < window] or [0.0]
    late = [ms for t, ms in scans if t - start >= seconds - window] or [0.0]
    return {
        "rate_per_s": rate,
        "first_per_s": first,
        "last_per_s": last,
        "last_over_first": last / first if first else 0.0,
        "scan_first_ms": statistics.median(early),
        "scan_last_ms": statistics.median(late),
    }


async def _probe_claims(url: str, scans: list[tuple[float, float]], until: float) -> None:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        while (began := time.perf_counter()) < until:
            await conn.execute(CLAIM_SCAN)
            await conn.rollback()
            scans.append((began, (time.perf_counter() - began) * 1000))
            await anyio.sleep(min(0.5, max(0.0, until - time.perf_counter())))


async def _dead_tuples(url: str) -> float:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute(DEAD_TUPLES)).fetchone()
    return float(row[0]) if row else 0.0


@asynccontextmanager
async def _long_transaction(url: str, wanted: bool) -> AsyncIterator[None]:
    """A separate connection holding `BEGIN; SELECT txid_current();` open: vacuum cannot clean."""
    if not wanted:
        yield
        return
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute("SELECT txid_current()")
        yield
        await conn.rollback()


if __name__ == "__main__":
    harness.main(build)
