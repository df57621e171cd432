"""How fast the ops page answers over a large job history: the overview (queues, pauses, the
hour's charts and percentiles, dead letters), its live part, a search by argument and a job's
page, on the Postgres backend with `--rows` finished jobs in job_history.

Run: `uv run python -m bench.ops_page [--quick] [--rows N] [--times T]`. The history is filled
with one INSERT ... SELECT (a tenth of the jobs dead, each with an `order_id`), 500 dead jobs in
the jobs table, and an hour of per-minute counts from four worker processes for six job types
on three queues. Each page is then fetched `T` times through the real app (routing, the
operator check, the queries, Jinja); printed: each page's median and worst milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio
import psycopg
from litestar.testing import AsyncTestClient

from bench.embedded import database_url
from skincare_core.jobs.ops import OpsService
from skincare_http.ops import OpsSettings, create_ops_app
from skincare_postgres import create_engine, postgres_backend, upgrade
from skincare_postgres.engine import libpq_conninfo

TOKEN = "bench-ops-token-long-enough-for-32-bytes"
SETTINGS = OpsSettings(jwt_secret="x" * 32, jwt_issuer="bench", ops_token=TOKEN, csrf_secret="c")
QUEUES = ("critical", "default", "bulk")
TYPES = ("send_confirmation_email", "send_payment_received_email", "expire_unpaid_order",
         "process_payment", "generate_invoice_pdf", "send_daily_sales_summary")  # fmt: skip

FILL_HISTORY = """
INSERT INTO job_history (id, type, queue, state, args, enqueued_at, finished_at, attempts,
    attempt_log, last_error)
SELECT 'h' || n, (CAST(%(types)s AS text[]))[1 + n %% 6],
    (CAST(%(queues)s AS text[]))[1 + n %% 3],
    CASE WHEN n %% 10 = 0 THEN 'dead' ELSE 'done' END,
    jsonb_build_object('order_id', (n / 2)::text), now() - n * interval '50 ms',
    now() - n * interval '50 ms' + interval '20 ms', 1,
    jsonb_build_array(jsonb_build_object('start', now(), 'end', now(), 'worker', 'bench:1',
        'error', CASE WHEN n %% 10 = 0 THEN 'SMTPError: refused' END)),
    CASE WHEN n %% 10 = 0 THEN 'SMTPError: refused' END
FROM generate_series(1, %(rows)s) n
"""
FILL_DEAD = """
INSERT INTO jobs (id, type, body, queue, status, attempts, last_error, dead_at)
SELECT 'd' || n, 'send_confirmation_email',
    '{"id": "d' || n || '", "type": "send_confirmation_email", "payload": {"order_id": "'
        || n || '"}}',
    'default', 'dead', 5, 'SMTPError ' || (n % 7), now() - n * interval '1 s'
FROM generate_series(1, 500) n
"""
FILL_MINUTES = """
INSERT INTO job_minutes (queue, type, minute, slot, done, retried, failed, durations, pickups)
SELECT q, t, date_trunc('minute', now()) - m * interval '1 minute', s, 900, 20, 3,
    ARRAY[0, 0, 10, 100, 400, 300, 80, 20, 10, 3, 0, 0, 0, 0, 0, 0]::bigint[],
    ARRAY[0, 50, 300, 400, 100, 50, 20, 3, 0, 0, 0, 0, 0, 0, 0, 0]::bigint[]
FROM unnest(CAST(%(queues)s AS text[])) q, unnest(CAST(%(types)s AS text[])) t,
    generate_series(0, 59) m, generate_series(0, 3) s
"""


def _fill(url: str, rows: int) -> float:
    started = time.perf_counter()
    params = {"types": list(TYPES), "queues": list(QUEUES), "rows": rows}
    with psycopg.connect(libpq_conninfo(url), autocommit=True) as conn:
        conn.execute(FILL_HISTORY, params)
        conn.execute(FILL_DEAD)
        conn.execute(FILL_MINUTES, params)
        conn.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


async def _time_pages(url: str, times: int) -> dict[str, list[float]]:
    engine = create_engine(url)
    pages = {
        "overview /ops/": "/ops/",
        "live part /ops/live": "/ops/live",
        "search order_id=123": "/ops/find?q=order_id%3D123",
        "a finished job's page": "/ops/jobs/h246",
    }
    took: dict[str, list[float]] = {name: [] for name in pages}
    async with postgres_backend(engine, queues=QUEUES) as backend:
        ops = OpsService(
            dead_letters=backend.dead_letters,
            stats=backend.stats,
            queue_names=QUEUES,
            outcomes=backend.outcomes,
            pauses=backend.pauses,
            actions=backend.actions,
            history=backend.history,
            minutes=backend.minutes,
        )
        app = create_ops_app(ops=ops, settings=SETTINGS)
        async with AsyncTestClient(app=app) as client:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            for _ in range(times + 1):
                for name, path in pages.items():
                    start = time.perf_counter()
                    answer = await client.get(path, headers=headers)
                    took[name].append((time.perf_counter() - start) * 1000)
                    assert answer.status_code == 200, (path, answer.status_code)
    await engine.dispose()
    # The first round warms the pool and the templates up: not counted.
    return {name: values[1:] for name, values in took.items()}


def main() -> None:
    """Fill the history, then time each page."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--times", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="20,000 rows, 3 times")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.times = 20_000, 3
    with database_url() as url:
        upgrade(url)
        filled = _fill(url, args.rows)
        took = anyio.run(_time_pages, url, args.times)
    print(f"{args.rows:,} history rows (filled in {filled:.0f} s), each page {args.times} times:")
    print("| page | median ms | worst ms |")
    print("| --- | ---: | ---: |")
    for name, values in took.items():
        print(f"| {name} | {statistics.median(values):.1f} | {max(values):.1f} |")


if __name__ == "__main__":
    main()
