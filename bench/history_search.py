"""Job history search over a million rows: an argument search, an id lookup and the other
searches `skincare jobs list` runs, each timed over 50 queries through `PostgresJobHistory`.

Run: `uv run python -m bench.history_search [--rows N] [--queries Q] [--quick]`. The history
table (migrated to head) is filled with `--rows` finished jobs (default 1,000,000; 50,000 with
--quick) by one INSERT ... SELECT from generate_series, its indexes built after the fill from
their own definitions (as a bulk load does), then analyzed. The rows: six job types, 97 % done,
2 % dead, 1 % cancelled, finished over the last 24 hours, an `order_id` argument shared by about
three jobs each. Each query is timed end to end from Python (statement and round trip, the live
jobs' query included: the jobs table is empty); printed: median, p95 and max in milliseconds.
With `--pending`, argument searches follow while 120,000 more rows (12,000 with --quick) are
added 100 a statement, as acks add them: their index entries wait in the GIN pending list until
an insert merges it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial

import anyio
import psycopg

from bench.embedded import database_url
from skincare_core.jobs.history import HistoryQuery, JobRecord
from skincare_postgres import create_engine, upgrade
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.history import PostgresJobHistory

TYPES = (
    "send_confirmation_email",
    "generate_invoice",
    "expire_unpaid_order",
    "process_payment",
    "sync_warehouse_stock",
    "send_daily_sales_summary",
)
GOAL_MS = 100.0

_FILL = """
INSERT INTO job_history (id, type, queue, state, args, enqueued_at, started_at, finished_at,
    attempts, worker, last_error)
SELECT 'job-' || n,
    (ARRAY['send_confirmation_email', 'generate_invoice', 'expire_unpaid_order',
        'process_payment', 'sync_warehouse_stock', 'send_daily_sales_summary'])[1 + mod(n, 6)],
    CASE WHEN mod(n, 10) = 0 THEN 'critical' ELSE 'default' END,
    CASE WHEN mod(n, 100) < 97 THEN 'done' WHEN mod(n, 100) < 99 THEN 'dead' ELSE 'cancelled' END,
    jsonb_build_object('order_id', (n / 3)::text, 'user_id', (mod(n, 5000))::text),
    at - interval '2 seconds', at - interval '50 milliseconds', at, 1 + mod(n, 3), 'bench:1',
    CASE WHEN mod(n, 100) BETWEEN 97 AND 98 THEN 'PermanentJobError: bench' END
FROM generate_series(1, %(rows)s) n,
    LATERAL (SELECT now() - make_interval(secs => 86400.0 * (%(rows)s - n) / %(rows)s) AS at) t
"""


async def fill(url: str, rows: int) -> float:
    """Fill job_history with `rows` rows, indexes built after; seconds it took."""
    began = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as c:
        cursor = await c.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'job_history'"
        )
        indexes = await cursor.fetchall()
        for name, _ in indexes:
            await c.execute(f'DROP INDEX "{name}"')
        await c.execute(_FILL, {"rows": rows})
        await c.execute("SET maintenance_work_mem = '256MB'")
        for _, definition in indexes:
            await c.execute(definition)
        await c.execute("VACUUM ANALYZE job_history")
    return time.perf_counter() - began


async def timed(run: Callable[[int], Awaitable[object]], queries: int) -> list[float]:
    """Milliseconds each of `queries` calls of `run(n)` took (after one warm-up call)."""
    await run(-1)
    took = []
    for n in range(queries):
        began = time.perf_counter()
        await run(n)
        took.append((time.perf_counter() - began) * 1000)
    return took


def searches(
    history: PostgresJobHistory, rows: int, rng: random.Random
) -> dict[str, Callable[[int], Awaitable[object]]]:
    """The searches timed, by what each finds."""

    async def by_argument(_: int) -> list[JobRecord]:
        order = str(rng.randrange(rows // 3))
        return await history.find(HistoryQuery(args={"order_id": order}))

    async def by_id(_: int) -> JobRecord | None:
        return await history.get(f"job-{rng.randrange(1, rows + 1)}")

    async def by_type_last_hour(_: int) -> list[JobRecord]:
        since = datetime.now(UTC) - timedelta(hours=1)
        return await history.find(HistoryQuery(job_type=rng.choice(TYPES), since=since))

    async def dead_ones(_: int) -> list[JobRecord]:
        return await history.find(HistoryQuery(state="dead"))

    async def newest(_: int) -> list[JobRecord]:
        return await history.find(HistoryQuery(limit=50))

    return {
        "argument (order_id=N)": by_argument,
        "id": by_id,
        "type, last hour": by_type_last_hour,
        "state dead": dead_ones,
        "newest 50, no filter": newest,
    }


# Finished jobs acked after the fill, 100 a statement as the completer writes them: their argument
# index entries wait in the GIN index's pending list until it passes gin_pending_list_limit.
_ACKED_LATER = """
INSERT INTO job_history (id, type, queue, state, args, finished_at, attempts)
SELECT 'later-' || n, 'send_confirmation_email', 'default', 'done',
    jsonb_build_object('order_id', (n / 3)::text, 'user_id', (mod(n, 5000))::text), now(), 1
FROM generate_series(CAST(%(first)s AS int), CAST(%(first)s AS int) + 99) n
"""


async def pending(
    url: str, history: PostgresJobHistory, rows: int, queries: int, *, step: int
) -> None:
    """Argument searches while the pending list fills: `step` more rows at a time, 100 a
    statement (autovacuum off, so only an insert merges the list); each step prints the
    search's median and max and the slowest insert (the one that merged the list, if any)."""
    rng = random.Random(11)
    search = searches(history, rows, rng)["argument (order_id=N)"]
    print(
        "\n| rows added since the fill | argument search median ms | max ms | slowest insert ms |"
    )
    print("| --- | --- | --- | --- |")
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as c:
        await c.execute("ALTER TABLE job_history SET (autovacuum_enabled = off)")
        added = 0
        for _ in range(12):
            slowest = 0.0
            for _ in range(step // 100):
                began = time.perf_counter()
                await c.execute(_ACKED_LATER, {"first": added + 1})
                slowest, added = max(slowest, time.perf_counter() - began), added + 100
            took = await timed(search, queries)
            print(
                f"| {added:,} | {statistics.median(took):.1f} | {max(took):.1f}"
                f" | {slowest * 1000:.1f} |",
                flush=True,
            )


async def run(rows: int, queries: int, *, pending_step: int | None = None) -> None:
    """Fill, then time each search and print the table."""
    with database_url() as url:
        upgrade(url)
        print(f"filling {rows:,} history rows ...", flush=True)
        print(f"filled in {await fill(url, rows):.1f} s\n", flush=True)
        engine = create_engine(url)
        try:
            history = PostgresJobHistory(engine)
            rng = random.Random(7)
            print(f"| search ({queries} queries, {rows:,} rows) | median ms | p95 ms | max ms |")
            print("| --- | --- | --- | --- |")
            for name, search in searches(history, rows, rng).items():
                took = sorted(await timed(search, queries))
                p95 = took[max(0, round(0.95 * len(took)) - 1)]
                median = statistics.median(took)
                print(f"| {name} | {median:.1f} | {p95:.1f} | {took[-1]:.1f} |", flush=True)
            if pending_step is not None:
                await pending(url, history, rows, queries, step=pending_step)
        finally:
            await engine.dispose()
    print(f"\ngoal: an argument search and an id lookup under {GOAL_MS:.0f} ms")


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="history rows (1,000,000)")
    parser.add_argument("--queries", type=int, default=50, help="queries per search (50)")
    parser.add_argument("--quick", action="store_true", help="50,000 rows")
    parser.add_argument(
        "--pending", action="store_true", help="then argument searches while the pending list fills"
    )
    args = parser.parse_args()
    rows = args.rows or (50_000 if args.quick else 1_000_000)
    step = (1_000 if args.quick else 10_000) if args.pending else None
    anyio.run(partial(run, rows, args.queries, pending_step=step))


if __name__ == "__main__":
    main()
