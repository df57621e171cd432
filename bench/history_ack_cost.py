"""What the job history costs the ack statement on the server, taken apart: the ack without
history, the shipped ack with history, the same with random (UUID4) ids and with the body
parsed once for each use (the statement before), with each of job_history's indexes dropped and
with all of them, the argument index without a pending list (fastupdate off), a minimal
seven-column row with no index (the least a history row written by the ack costs) and with
the id index only (the settle's part if the arguments were indexed at enqueue), and five
designs not taken: a BRIN index on finished_at for the type index, a hash index for the id
index, the id and type indexes compared in the C collation (the database's, C.UTF-8, compares
by strcoll), the body not parsed (the arguments not kept), and River's: the finished row kept
in the jobs table, its arguments and type indexed there; and the next design not built: the
history row written into an unindexed time slice of a partitioned table.

Run: `uv run python -m bench.history_ack_cost [--quick] [--jobs N] [--batch B] [--reps R]`.
Each run fills N leased jobs with COPY and acks them B a statement on one autocommit
connection, as the completer does; the variants take turns, rep after rep. Printed: the median
wall seconds, and the server backend's CPU (from /proc, user + system) over the N jobs, and the
CPU a job above the ack without history (median, and from the fastest reps); then the CPU a job
of merging the GIN pending lists the acks filled (the work a vacuum or a later insert would do),
and the two together. Autovacuum is off on the two tables while the program runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import psycopg

from bench.embedded import database_url
from skincare_core.jobs.job import new_job_id
from skincare_postgres import upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs import queue_sql

Conn = psycopg.Connection[tuple[object, ...]]
# Each job is leased (a receipt, a lease far off) and started, as a claim leaves it.
_LONG_AGO, _FAR_OFF = datetime(2026, 1, 1, tzinfo=UTC), datetime(2099, 1, 1, tzinfo=UTC)
_INDEXES = (
    "ix_job_history_id",
    "ix_job_history_args",
    "ix_job_history_type_finished_at",
    "ix_job_history_failed_finished_at",
)
_RESTORE = (
    "CREATE INDEX IF NOT EXISTS ix_job_history_id ON job_history (id)",
    "CREATE INDEX IF NOT EXISTS ix_job_history_args ON job_history USING gin (args jsonb_path_ops)",
    "CREATE INDEX IF NOT EXISTS ix_job_history_type_finished_at ON job_history (type, finished_at)",
    "CREATE INDEX IF NOT EXISTS ix_job_history_failed_finished_at ON job_history (finished_at)"
    " WHERE state <> 'done'",
)
_MINIMAL = """kept AS (
    INSERT INTO job_history (id, type, queue, state, args, finished_at, attempts)
    SELECT s.id, s.type, s.queue, 'done', '{}', now(), s.attempts FROM settled s)"""


def _minimal_row(statement: str) -> str:
    start, end = statement.index("kept AS ("), statement.index("\nINSERT INTO job_outcomes")
    return statement[:start] + _MINIMAL + statement[end:]


_BENCH_INDEX = "CREATE INDEX bench_replacement ON job_history"
# Every index a variant created (each named bench_*), dropped before the next run.
_BENCH_INDEXES = r"SELECT indexname FROM pg_indexes WHERE indexname LIKE 'bench\_%'"

# River's design: the shipped ack with an UPDATE to done for its DELETE (dead_at standing in for
# a finished_at column); the jobs table indexes its finished rows' arguments and type, as
# job_history does.
_STATUS_CHECK = "ck_jobs_status_allowed"
_KEPT_IN_JOBS = queue_sql.ACK.replace(
    "DELETE FROM jobs USING unnest",
    "UPDATE jobs SET status = 'done', dead_at = now(), receipt = NULL, lease_expires_at = NULL\n"
    "    FROM unnest",
)
_JOBS_INDEXES = (
    "CREATE INDEX bench_jobs_args ON jobs USING gin"
    " ((CAST(body AS jsonb) -> 'payload') jsonb_path_ops) WHERE status = 'done'",
    "CREATE INDEX bench_jobs_type ON jobs (type, dead_at) WHERE status = 'done'",
)


# The next design not built (docs/performance.md section 25): history rows written into the
# current time slice of a range-partitioned table, unindexed until the slice closes.
_SLICES = "bench_history_slices"
_IN_SLICES = queue_sql.ACK_KEEPING.replace("INSERT INTO job_history", f"INSERT INTO {_SLICES}")
_SLICED = (
    f"CREATE TABLE {_SLICES} (LIKE job_history INCLUDING DEFAULTS)"
    " PARTITION BY RANGE (finished_at)",
    f"CREATE TABLE bench_history_slice_now PARTITION OF {_SLICES}"
    " FOR VALUES FROM (now() - interval '1 hour') TO (now() + interval '1 hour')",
)


class Variant(NamedTuple):
    """An ack statement, the ids its jobs get, the job_history indexes dropped for it and the
    ones created in their place (`CREATE INDEX` statements, each named `bench_*`), or tables
    created for it (`CREATE TABLE bench_*`), and the table its history rows go to."""

    statement: str
    new_id: Callable[[], str]
    dropped: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    kept_in_jobs: bool = False
    history: str = "job_history"


def _random_id() -> str:
    return uuid.uuid4().hex


_KEEPING = queue_sql.ACK_KEEPING
VARIANTS = {
    "no history": Variant(queue_sql.ACK, new_job_id),
    "history (shipped)": Variant(_KEEPING, new_job_id),
    "history, random ids": Variant(_KEEPING, _random_id),
    "history, random ids, body parsed per use": Variant(
        _KEEPING.replace(" OFFSET 0) d", ") d"), _random_id
    ),
    "history, no id index": Variant(_KEEPING, new_job_id, _INDEXES[:1]),
    "history, no argument index": Variant(_KEEPING, new_job_id, _INDEXES[1:2]),
    "history, no type index": Variant(_KEEPING, new_job_id, _INDEXES[2:3]),
    "history, argument index without a pending list": Variant(
        _KEEPING,
        new_job_id,
        _INDEXES[1:2],
        (f"{_BENCH_INDEX} USING gin (args jsonb_path_ops) WITH (fastupdate = off)",),
    ),
    "history row, no index": Variant(_KEEPING, new_job_id, _INDEXES),
    "7-column row, no index": Variant(_minimal_row(_KEEPING), new_job_id, _INDEXES),
    # What the settle would pay if the arguments were recorded and indexed at enqueue (as River
    # indexes them at insert): the finished run's row, found by its id.
    "7-column row, id index only": Variant(_minimal_row(_KEEPING), new_job_id, _INDEXES[1:]),
    # Designs measured and not taken (docs/performance.md section 25).
    "history, BRIN on finished_at for the type index": Variant(
        _KEEPING, new_job_id, _INDEXES[2:3], (f"{_BENCH_INDEX} USING brin (finished_at)",)
    ),
    "history, hash index for the id index": Variant(
        _KEEPING, new_job_id, _INDEXES[:1], (f"{_BENCH_INDEX} USING hash (id)",)
    ),
    "history, id and type indexes in the C collation": Variant(
        _KEEPING,
        new_job_id,
        (_INDEXES[0], _INDEXES[2]),
        (
            f'{_BENCH_INDEX} (id COLLATE "C")',
            'CREATE INDEX bench_type_c ON job_history (type COLLATE "C", finished_at)',
        ),
    ),
    "history, body not parsed (no arguments kept)": Variant(
        _KEEPING.replace("CAST(s.body AS jsonb)", "CAST('{}' AS jsonb)"), new_job_id
    ),
    "finished rows kept in jobs (River's way), no job_history": Variant(
        _KEPT_IN_JOBS, new_job_id, _INDEXES, _JOBS_INDEXES, kept_in_jobs=True
    ),
    "history into an unindexed time slice (a partition)": Variant(
        _IN_SLICES, new_job_id, created=_SLICED, history=_SLICES
    ),
}


def _fill(conn: Conn, jobs: int, new_id: Callable[[], str]) -> list[tuple[str, str]]:
    leases = [(new_id(), uuid.uuid4().hex) for _ in range(jobs)]
    columns = "id, type, body, queue, receipt, available_at, lease_expires_at, attempts, started_at"
    with conn.cursor() as cur, cur.copy(f"COPY jobs ({columns}) FROM STDIN") as copy:
        for n, (job_id, receipt) in enumerate(leases):
            body = {"id": job_id, "type": "send_confirmation_email", "headers": {}}
            body["payload"] = {"order_id": n, "email": f"c{n}@example.com"}
            lease = (receipt, _LONG_AGO, _FAR_OFF, 1, _LONG_AGO)
            copy.write_row((job_id, body["type"], json.dumps(body), "default", *lease))
    return leases


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


def _ack_all(conn: Conn, statement: str, leases: list[tuple[str, str]], batch: int) -> None:
    for at in range(0, len(leases), batch):
        chunk = leases[at : at + batch]
        ids, receipts = [i for i, _ in chunk], [r for _, r in chunk]
        conn.execute(statement, {"ids": ids, "receipts": receipts, "worker": "bench"})


class Taken(NamedTuple):
    """One variant's run: the acks' wall and server CPU seconds, and the server CPU seconds of
    merging what the acks left in GIN pending lists into their indexes."""

    wall: float
    cpu: float
    pending: float


def run(conninfo: str, variant: Variant, *, jobs: int, batch: int) -> Taken:
    """Fill, ack every job, then merge the GIN pending lists the acks filled."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("TRUNCATE jobs, job_history")
        for index in _RESTORE:
            conn.execute(index)
        for (name,) in conn.execute(
            r"SELECT indexname FROM pg_indexes WHERE indexname LIKE 'bench\_%'"
        ):
            conn.execute(f"DROP INDEX {name}")
        conn.execute(f"DROP TABLE IF EXISTS {_SLICES}")
        for name in variant.dropped:
            conn.execute(f"DROP INDEX {name}")
        for statement in variant.created:
            conn.execute(statement)
        leases = _fill(conn, jobs, variant.new_id)
        conn.execute("VACUUM ANALYZE jobs")
        pid = conn.info.backend_pid
        with _done_allowed(conn) if variant.kept_in_jobs else nullcontext():
            started, cpu = time.perf_counter(), _cpu_seconds(pid)
            _ack_all(conn, variant.statement, leases, batch)
            wall, cpu = time.perf_counter() - started, _cpu_seconds(pid) - cpu
            kept = 0 if variant.statement == queue_sql.ACK or variant.kept_in_jobs else jobs
            done = jobs if variant.kept_in_jobs else 0
            _check_acked(conn, kept=kept, done=done, history=variant.history)
        return Taken(wall, cpu, _merge_pending_lists(conn))


# A GIN index built with fastupdate (the default) takes each insert into a pending list, and
# merges the list into the index later: in the inserting statement once it outgrows
# gin_pending_list_limit, else in a vacuum. That work is the ack's even where it runs later.
_GIN_INDEXES = """SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'gin'"""


def _merge_pending_lists(conn: Conn) -> float:
    """Merge every GIN index's pending list now; the server CPU seconds it took."""
    pid, began = conn.info.backend_pid, _cpu_seconds(conn.info.backend_pid)
    for (name,) in conn.execute(_GIN_INDEXES).fetchall():
        conn.execute("SELECT gin_clean_pending_list(CAST(%s AS regclass))", [name])
    return _cpu_seconds(pid) - began


@contextmanager
def _done_allowed(conn: Conn) -> Iterator[None]:
    """While it lasts, the jobs' status check (as migrated) also allows River's 'done' rows;
    they are deleted at the end, and the check put back."""
    found = conn.execute(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = %s", [_STATUS_CHECK]
    ).fetchone()
    if found is None:
        raise RuntimeError(f"the jobs table has no {_STATUS_CHECK}")
    check = str(found[0])
    widened = check.replace("ARRAY[", "ARRAY['done'::text, ", 1)
    replace = f"ALTER TABLE jobs DROP CONSTRAINT {_STATUS_CHECK}, ADD CONSTRAINT {_STATUS_CHECK}"
    conn.execute(f"{replace} {widened}")
    try:
        yield
    finally:
        conn.execute("DELETE FROM jobs WHERE status = 'done'")
        conn.execute(f"{replace} {check}")


def _check_acked(conn: Conn, *, kept: int, done: int, history: str) -> None:
    # Every job acked: gone, or kept as done; a history row for each where the variant keeps one.
    counts = conn.execute(
        "SELECT (SELECT count(*) FILTER (WHERE status <> 'done') FROM jobs),"
        " (SELECT count(*) FILTER (WHERE status = 'done') FROM jobs),"
        f" (SELECT count(*) FROM {history})"
    )
    if (row := counts.fetchone()) != (0, done, kept):
        raise RuntimeError(f"expected (0 jobs, {done} done, {kept} history rows), got {row}")


def main() -> None:
    """Parse the options, run the variants in turns, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 jobs, 1 rep")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    jobs, reps = (1_000, 1) if args.quick else (args.jobs, args.reps)
    taken: dict[str, list[Taken]] = {name: [] for name in VARIANTS}
    with database_url() as url:
        upgrade(url)
        without_autovacuum(libpq_conninfo(url))
        for _ in range(reps):
            for name, variant in VARIANTS.items():
                taken[name].append(run(libpq_conninfo(url), variant, jobs=jobs, batch=args.batch))
    _print(taken, jobs=jobs, batch=args.batch, reps=reps)


def without_autovacuum(conninfo: str) -> None:
    """Autovacuum off on jobs and job_history: no vacuum merges a pending list while a variant
    runs, so each run's merge is its own."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("ALTER TABLE job_history SET (autovacuum_enabled = off)")
        conn.execute("ALTER TABLE jobs SET (autovacuum_enabled = off)")


def _print(taken: dict[str, list[Taken]], *, jobs: int, batch: int, reps: int) -> None:
    base = taken["no history"]
    base_cpu, base_min = statistics.median(t.cpu for t in base), min(t.cpu for t in base)
    print(
        f"\n## The ack statement with and without history"
        f" ({jobs:,} jobs, batch {batch}, {reps} reps)\n"
    )
    print(
        "| variant | wall s | server CPU-s | us a job over no history | (fastest reps)"
        " | pending-list merge, us a job | both, us a job |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, runs in taken.items():
        wall, cpu = statistics.median(t.wall for t in runs), statistics.median(t.cpu for t in runs)
        over = (cpu - base_cpu) / jobs * 1e6
        fastest = (min(t.cpu for t in runs) - base_min) / jobs * 1e6
        merge = statistics.median(t.pending for t in runs) / jobs * 1e6
        print(
            f"| {name} | {wall:.2f} | {cpu:.2f} | {over:.1f} | {fastest:.1f} | {merge:.1f}"
            f" | {over + merge:.1f} |"
        )


if __name__ == "__main__":
    main()
