"""What honouring the pauses costs a claim: the shipped claim (pauses read apart, at most every
half second, and the claim's SQL unchanged while no type is paused) against a claim that joins
job_pauses itself, and each with one type paused.

Run: `uv run python -m bench.pause_claim [--quick] [--rows N] [--rounds R] [--claims C]`. N
ready jobs of one queue (a tenth of them of the paused type) wait; each claim of 10 runs in a
transaction that is rolled back, so every claim sees the same table. After a warm-up the
variants take turns, round after round, each round starting with the next one; printed: the
median microseconds per claim of each, over all rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import LiteralString

import psycopg

from bench.embedded import database_url
from skincare_postgres import upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs import queue_sql

PAUSED_TYPE = "held"
# The claim with the pauses joined in: no separate read, a subquery on every claim.
JOINED: LiteralString = queue_sql.CLAIM.replace(
    "ORDER BY available_at LIMIT",
    "AND NOT EXISTS (SELECT 1 FROM job_pauses p WHERE (p.kind = 'queue' AND p.name = jobs.queue)"
    " OR (p.kind = 'type' AND p.name = jobs.type))\n    ORDER BY available_at LIMIT",
)
_SETTINGS = ("SET plan_cache_mode = force_custom_plan", "SET enable_sort = off")


def _fill(conn: psycopg.Connection[tuple[object, ...]], rows: int) -> None:
    conn.execute(
        "INSERT INTO jobs (id, type, body, queue, available_at)"
        " SELECT 'j' || n, CASE WHEN n %% 10 = 0 THEN %s ELSE 'noop' END, '{}', 'default',"
        " now() - interval '1 hour' + n * interval '1 ms' FROM generate_series(1, %s) n",
        (PAUSED_TYPE, rows),
    )
    conn.execute("VACUUM ANALYZE jobs")


def _time_claims(
    conn: psycopg.Connection[tuple[object, ...]],
    statement: LiteralString,
    params: dict[str, object],
    claims: int,
) -> list[float]:
    took = []
    for _ in range(claims):
        start = time.perf_counter()
        with conn.transaction(force_rollback=True):
            conn.execute(statement, params).fetchall()
        took.append((time.perf_counter() - start) * 1e6)
    return took


def _pause(conn: psycopg.Connection[tuple[object, ...]], paused: bool) -> None:
    conn.execute("DELETE FROM job_pauses")
    if paused:
        conn.execute("INSERT INTO job_pauses (kind, name) VALUES ('type', %s)", (PAUSED_TYPE,))


def _variants() -> dict[str, Callable[[dict[str, object]], tuple[LiteralString, bool]]]:
    return {
        "shipped, nothing paused (CLAIM)": lambda p: (queue_sql.CLAIM, False),
        "shipped, a type paused (CLAIM_SKIPPING_HELD)": lambda p: (
            queue_sql.CLAIM_SKIPPING_HELD,
            True,
        ),
        "joined, nothing paused": lambda p: (JOINED, False),
        "joined, a type paused": lambda p: (JOINED, True),
    }


def main() -> None:
    """Fill, then time each variant in turn, round after round."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="2 rounds of 20 claims")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.claims = 2, 20
    with database_url() as url:
        upgrade(url)
        with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
            for setting in _SETTINGS:
                conn.execute(setting)
            _fill(conn, args.rows)
            params: dict[str, object] = {
                "queue": "default",
                **queue_sql.floor_params({}),
                "limit": 10,
                "visibility": timedelta(seconds=30),
                "held": [PAUSED_TYPE],
            }
            variants = list(_variants().items())
            timings: dict[str, list[float]] = {name: [] for name, _ in variants}
            for round_ in range(-1, args.rounds):
                turn = variants[max(round_, 0) % 4 :] + variants[: max(round_, 0) % 4]
                for name, variant in turn:
                    statement, paused = variant(params)
                    _pause(conn, paused)
                    took = _time_claims(conn, statement, params, args.claims)
                    # Round -1 warms the caches and the plans up; it is not counted.
                    timings[name] += took if round_ >= 0 else []
    print(f"claim of 10 from {args.rows:,} ready rows, median of {args.rounds} x {args.claims}:")
    for name, took in timings.items():
        print(f"| {name} | {statistics.median(took):,.0f} us |")


if __name__ == "__main__":
    main()
