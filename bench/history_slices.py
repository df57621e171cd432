"""The history in time slices, measured and not built (docs/performance.md section 25): what the
ack and the slice's index build cost together, and what a search over slices costs.

Run: `uv run python -m bench.history_slices [--quick] [--jobs N] [--batch B] [--reps R]`.

The ack: N leased jobs acked B a statement (`history_ack_cost`'s harness), with no history, with
the shipped history row, and with the row written into an unindexed slice (a partition) whose
three indexes (id, arguments, type and time) are then built in bulk, as the slice's closing
would. Printed: the server's CPU a job above the ack without history (median of R reps), for
the ack, for the work it defers (the shipped history's GIN pending-list merge, the slice's
build) and for both.

The search: an argument search and an id lookup (median of 20 queries, milliseconds) over an
unindexed open slice of 50,000 to 1,000,000 rows (a sequential scan), and over 50 to 400
indexed closed slices of 5,000 rows each under one parent (a probe per slice). A slice design
answers in about the sum: its closed slices' count times the one cost, its open slice's rows
times the other.
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg

from bench import history_ack_cost as ack_cost
from bench.embedded import database_url
from skincare_postgres import upgrade
from skincare_postgres.engine import libpq_conninfo

_SLICE = "bench_history_slice_now"
# job_history's three indexes (as migrated), built on a slice once it closes.
_INDEXES = ("(id)", "USING gin (args jsonb_path_ops)", "(type, finished_at)")
_ACKS = ("no history", "history (shipped)", "history into an unindexed time slice (a partition)")
# A finished job's row as job_history holds it; `{n}` numbers it, `{base}` offsets the numbers.
_ROWS = """SELECT 'job-' || ({base} + n), 'send_email_' || mod(n, 6), 'default', 'done',
    jsonb_build_object('order_id', {base} + n, 'email', 'c' || n || '@example.com'),
    now(), now(), now() - make_interval(secs => n / 1000.0), 1, 'bench:1'
    FROM generate_series(1, {rows}) n"""
_COLUMNS = "(id, type, queue, state, args, enqueued_at, started_at, finished_at, attempts, worker)"
_ARGUMENT = "SELECT * FROM {table} WHERE args @> %s ORDER BY finished_at DESC LIMIT 50"
_ID = "SELECT * FROM {table} WHERE id = %s"


def _build_cpu(conninfo: str) -> float:
    """The server CPU seconds building the slice's three indexes took."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        pid = conn.info.backend_pid
        began = ack_cost._cpu_seconds(pid)
        for index in _INDEXES:
            conn.execute(f"CREATE INDEX ON {_SLICE} {index}")
        return ack_cost._cpu_seconds(pid) - began


def acks(conninfo: str, *, jobs: int, batch: int, reps: int) -> None:
    """Ack with each layout in turns, rep after rep; print the CPU a job over no history."""
    taken: dict[str, list[ack_cost.Taken]] = {name: [] for name in _ACKS}
    builds: list[float] = []
    for _ in range(reps):
        for name in _ACKS:
            taken[name].append(
                ack_cost.run(conninfo, ack_cost.VARIANTS[name], jobs=jobs, batch=batch)
            )
            if name == _ACKS[2]:
                builds.append(_build_cpu(conninfo))
    base = statistics.median(t.cpu for t in taken[_ACKS[0]])

    def per_job(seconds: float) -> float:
        return seconds / jobs * 1e6

    shipped = per_job(statistics.median(t.cpu for t in taken[_ACKS[1]]) - base)
    merged = per_job(statistics.median(t.pending for t in taken[_ACKS[1]]))
    sliced = per_job(statistics.median(t.cpu for t in taken[_ACKS[2]]) - base)
    build = per_job(statistics.median(builds))
    print(f"\n## The ack and the slice's index build ({jobs:,} jobs, batch {batch}, {reps} reps)\n")
    print("| layout | ack, us a job over no history | deferred index work, us a job | both |")
    print("| --- | --- | --- | --- |")
    print(
        f"| history (shipped), its GIN pending list merged | {shipped:.1f} | {merged:.1f}"
        f" | {shipped + merged:.1f} |"
    )
    print(
        f"| unindexed slice, built at close | {sliced:.1f} | {build:.1f} | {sliced + build:.1f} |"
    )


def _median_ms(conn: psycopg.Connection[tuple[object, ...]], query: str, value: str) -> float:
    took = []
    for _ in range(20):
        began = time.perf_counter()
        conn.execute(query, [value]).fetchall()
        took.append((time.perf_counter() - began) * 1000)
    return statistics.median(took)


def _create_history_like(conn: psycopg.Connection[tuple[object, ...]], name: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
    conn.execute(f"CREATE TABLE {name} (LIKE job_history INCLUDING DEFAULTS)")


def searches(conninfo: str, *, open_rows: tuple[int, ...], slices: tuple[int, ...]) -> None:
    """Time the searches over an open slice of each size and over each count of closed slices."""
    argument, wanted = '{"order_id": 123}', "job-123"
    print("\n## Searches over slices (20 queries each, median ms)\n")
    print("| layout | argument search | id lookup |")
    print("| --- | --- | --- |")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        _create_history_like(conn, "bench_open")
        for rows in open_rows:
            conn.execute("TRUNCATE bench_open")
            conn.execute(f"INSERT INTO bench_open {_COLUMNS} {_ROWS.format(base=0, rows=rows)}")
            conn.execute("VACUUM ANALYZE bench_open")
            by_argument = _median_ms(conn, _ARGUMENT.format(table="bench_open"), argument)
            by_id = _median_ms(conn, _ID.format(table="bench_open"), wanted)
            print(f"| open slice, {rows:,} rows, no index | {by_argument:.1f} | {by_id:.1f} |")
        for count in slices:
            _closed_slices(conn, count)
            by_argument = _median_ms(conn, _ARGUMENT.format(table="bench_closed"), argument)
            by_id = _median_ms(conn, _ID.format(table="bench_closed"), wanted)
            print(f"| {count} closed slices of 5,000 rows | {by_argument:.1f} | {by_id:.1f} |")
        conn.execute("DROP TABLE bench_open, bench_closed CASCADE")


def _closed_slices(conn: psycopg.Connection[tuple[object, ...]], count: int) -> None:
    """`count` slices of 5,000 rows, each with the three indexes, children of bench_closed."""
    _create_history_like(conn, "bench_closed")
    for k in range(count):
        child = f"bench_closed_{k}"
        conn.execute(f"CREATE TABLE {child} () INHERITS (bench_closed)")
        conn.execute(f"INSERT INTO {child} {_COLUMNS} {_ROWS.format(base=k * 5000, rows=5000)}")
        for index in _INDEXES:
            conn.execute(f"CREATE INDEX ON {child} {index}")
    conn.execute("ANALYZE bench_closed")


def main() -> None:
    """Parse the options, run both parts, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 jobs, 1 rep, small searches")
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    jobs, reps = (1_000, 1) if args.quick else (args.jobs, args.reps)
    open_rows = (5_000,) if args.quick else (50_000, 200_000, 500_000, 1_000_000)
    slices = (5,) if args.quick else (50, 200, 400)
    with database_url() as url:
        upgrade(url)
        conninfo = libpq_conninfo(url)
        ack_cost.without_autovacuum(conninfo)
        acks(conninfo, jobs=jobs, batch=args.batch, reps=reps)
        searches(conninfo, open_rows=open_rows, slices=slices)


if __name__ == "__main__":
    main()
