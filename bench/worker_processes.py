"""Scale across processes: 1, 2 and 4 worker processes draining one Postgres queue (issue 20,
section 5), with a check that no job ran twice.

Run: `uv run python -m bench.worker_processes [--quick] [--runs N]`. Uses
SKINCARE_BENCH_DATABASE_URL when set, otherwise starts an embedded PostgreSQL in a temporary
directory. Each run empties the jobs table, enqueues the no-op jobs, starts the processes (each a
`Worker` at concurrency 20, receive_batch 10 on `PostgresQueue`), waits until every one is
connected and claiming-ready, then starts the clock and stops it when the table is empty (every
job acked). Each process writes the ids it ran; the table counts them and their duplicates.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import psycopg
from sqlalchemy import text

from bench.embedded import database_url
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import create_engine, postgres_backend, upgrade
from skincare_postgres.engine import libpq_conninfo

PROCESSES = (1, 2, 4)
CONCURRENCY, BATCH = 20, 10


async def _child(url: str, folder: Path) -> None:
    """One worker process: say ready, run from "go" to "stop" (lines on stdin), then write the
    ids it ran to `folder` and its CPU seconds over the drain to stdout."""
    ran: list[str] = []

    async def noop(job: Job) -> None:
        ran.append(job.id)

    router = Router()
    router.register("noop", noop)
    engine = create_engine(url, pool_size=2)
    try:
        async with postgres_backend(engine) as backend:
            worker = Worker(
                queue=backend.queue(), router=router, concurrency=CONCURRENCY, receive_batch=BATCH
            )
            print("ready", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            cpu = time.process_time()
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                await anyio.to_thread.run_sync(sys.stdin.readline)
                tg.cancel_scope.cancel()
            cpu = time.process_time() - cpu
    finally:
        await engine.dispose()
    (folder / f"ran-{os.getpid()}").write_text("\n".join(ran))
    print(f"{cpu}", flush=True)


async def _fill(url: str, jobs: int) -> None:
    engine = create_engine(url, pool_size=2)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("TRUNCATE jobs"))
        async with postgres_backend(engine) as backend:
            for start in range(0, jobs, 10_000):
                batch = [new_job("noop", n=str(n)) for n in range(start, min(jobs, start + 10_000))]
                await backend.sink.enqueue_many([Envelope(job) for job in batch])
    finally:
        await engine.dispose()


def _remaining(conn: psycopg.Connection[tuple[int]]) -> int:
    row = conn.execute("SELECT count(*) FROM jobs").fetchone()
    return 0 if row is None else row[0]


def run_once(url: str, processes: int, jobs: int) -> dict[str, float]:
    """One drain by `processes` worker processes: jobs/s, worker CPU-s, ids run and repeated."""
    anyio.run(_fill, url, jobs)
    conninfo = libpq_conninfo(create_engine(url).url)
    with tempfile.TemporaryDirectory(prefix="skincare-procs-") as tmp:
        folder = Path(tmp)
        command = [sys.executable, "-m", "bench.worker_processes", "--child", url, tmp]
        children = [_spawn(command) for _ in range(processes)]
        for child in children:
            assert _line(child) == "ready"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            began = time.perf_counter()
            for child in children:
                _say(child, "go")
            while _remaining(conn):
                time.sleep(0.005)
            seconds = time.perf_counter() - began
        for child in children:
            _say(child, "stop")
        cpu = sum(float(_line(child)) for child in children)
        for child in children:
            if child.wait(timeout=60) != 0:
                raise SystemExit(f"a worker process exited with {child.returncode}")
        ids = [i for f in folder.glob("ran-*") for i in f.read_text().split("\n") if i]
    return {
        "jobs_per_s": jobs / seconds,
        "worker_cpu_s": cpu,
        "ran": len(ids),
        "twice": len(ids) - len(set(ids)),
    }


def _spawn(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _line(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    return child.stdout.readline().strip()


def _say(child: subprocess.Popen[str], word: str) -> None:
    assert child.stdin is not None
    child.stdin.write(word + "\n")
    child.stdin.flush()


def table(results: dict[int, list[dict[str, float]]], jobs: int) -> str:
    """Median jobs/s (range), the workers' CPU-s over the drain (all processes), ids run and
    ids run twice, per process count."""
    head = [
        "processes",
        "jobs/s median (range)",
        "x 1 process",
        "worker CPU-s (drain)",
        "ran",
        "twice",
    ]
    lines = [f"## Drain {jobs:,} no-op jobs with N worker processes", "", _row(head)]
    lines.append(_row(["---"] * len(head)))
    one = statistics.median(r["jobs_per_s"] for r in results[PROCESSES[0]])
    for processes, runs in results.items():
        rates = [r["jobs_per_s"] for r in runs]
        median = statistics.median(rates)
        cells = [
            str(processes),
            f"{median:,.0f} ({min(rates):,.0f}-{max(rates):,.0f})",
            f"{median / one:.2f}",
            f"{statistics.median(r['worker_cpu_s'] for r in runs):.2f}",
            f"{sum(int(r['ran']) for r in runs):,}",
            str(sum(int(r["twice"]) for r in runs)),
        ]
        lines.append(_row(cells))
    return "\n".join(lines)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    """Parse arguments; a child runs one worker, the parent runs the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 jobs, 1 run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("URL", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        anyio.run(_child, args.child[0], Path(args.child[1]))
        return
    jobs, runs = (2_000, 1) if args.quick else (20_000, args.runs)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with database_url() as url:
        upgrade(url)
        results: dict[int, list[dict[str, float]]] = {n: [] for n in PROCESSES}
        for _ in range(runs):
            for processes in PROCESSES:
                results[processes].append(run_once(url, processes, jobs))
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print(table(results, jobs))


if __name__ == "__main__":
    main()
