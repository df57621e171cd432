"""Commit latency when the server backend shares a CPU with a busy process (a noisy neighbour).

Run: `uv run python -m bench.commit_wakeup`. One psycopg connection to the benchmarks' database
(SKINCARE_BENCH_DATABASE_URL, or an embedded server) times a read and a one-row insert, first
with the scheduler free to place everything, then with that connection's backend and a
busy-looping process both pinned to CPU 0 (this process on the other). It explains the slow
mode of bench.checkout_latency on this machine: every checkout and cart change commits a write.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from bench.embedded import database_url
from skincare_postgres.engine import libpq_conninfo

STATEMENTS = {
    "SELECT 1": "SELECT 1",
    "INSERT one row (autocommit)": "INSERT INTO bench_commit_wakeup (v) VALUES (1)",
}


@contextmanager
def neighbour(backend_pid: int) -> Iterator[None]:
    """A busy loop on CPU 0 with the backend; this process moves to the other CPUs."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(hog.pid, {0})
        os.sched_setaffinity(backend_pid, {0})
        os.sched_setaffinity(0, before - {0})
        yield
    finally:
        hog.kill()
        hog.wait()
        os.sched_setaffinity(backend_pid, before)
        os.sched_setaffinity(0, before)


def timings(conn: psycopg.Connection[tuple[object, ...]], sql: str, n: int) -> list[float]:
    """Seconds per statement, `n` times."""
    result = []
    for _ in range(n):
        start = time.perf_counter()
        conn.execute(sql.encode())
        result.append(time.perf_counter() - start)
    return result


def main() -> None:
    """Measure both placements and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="statements per cell")
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs two CPUs: the neighbour takes CPU 0")
    with database_url() as url, psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_wakeup (v int)")
        rows = [("free", name, timings(conn, sql, args.n)) for name, sql in STATEMENTS.items()]
        with neighbour(conn.info.backend_pid):
            for name, sql in STATEMENTS.items():
                rows.append(("pinned with a busy loop", name, timings(conn, sql, args.n)))
        conn.execute("DROP TABLE bench_commit_wakeup")
    print(f"{'placement':<24} {'statement':<28} {'median ms':>9} {'p90 ms':>7}")
    for placement, name, times in rows:
        p90 = statistics.quantiles(times, n=10)[-1]
        median = statistics.median(times)
        print(f"{placement:<24} {name:<28} {1000 * median:>9.3f} {1000 * p90:>7.3f}")


if __name__ == "__main__":
    main()
