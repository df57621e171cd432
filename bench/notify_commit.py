"""NOTIFY and the checkout's commit: commits/s of a checkout-shaped transaction at 16 and 64
clients with no NOTIFY, with the NOTIFY in the transaction and with the notifier's NOTIFY after
the commit, and the pickup latency from the commit.

Run: `uv run python -m bench.notify_commit [--quick] [--reps N]`. Uses SKINCARE_BENCH_DATABASE_URL
when set, otherwise starts an embedded PostgreSQL in a temporary directory. The transaction is in
bench/checkout_tx.py. Commit rates: each client loops on its own connection for a fixed time
while a LISTEN connection reads the channel (as an idle worker would); cells run in alternation,
and the table gives each cell's median over the runs. Pickup: checkouts at a steady rate from 4
connections, one real Worker on PostgresQueue (poll interval 1 s) picks the confirmation jobs
up; milliseconds from the commit's return to the handler's start, in this process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import timedelta

import anyio
import psycopg
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.checkout_tx import CHANNEL, CONFIRMATION, Variant, checkout, variants
from bench.embedded import database_url
from skincare_core.jobs import Job, Router, Worker
from skincare_postgres import PostgresNotifier, PostgresQueue, create_engine, metadata, upgrade
from skincare_postgres.engine import libpq_conninfo

CLIENTS = (16, 64)
RATIO_GOAL, P50_GOAL_MS, P99_GOAL_MS = 0.9, 5.0, 20.0
_TABLES = ", ".join(t.name for t in metadata.sorted_tables)
Conn = psycopg.AsyncConnection[tuple[object, ...]]


async def _seed(conninfo: str, n: int) -> list[tuple[int, int]]:
    """Empty every table; one (user, product) per client."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE")
        pairs = []
        for k in range(n):
            [(user,)] = await (await conn.execute(
                "INSERT INTO users (email) VALUES (%s) RETURNING id", (f"b{k}@example.test",)
            )).fetchall()  # fmt: skip
            [(product,)] = await (await conn.execute(
                "INSERT INTO products (sku, name, price_rupiah, stock)"
                " VALUES (%s, 'Bench serum', 150000, 1000000000) RETURNING id", (f"B-{k}",)
            )).fetchall()  # fmt: skip
            pairs.append((int(str(user)), int(str(product))))
        return pairs


async def _empty_orders(conninfo: str) -> None:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute("TRUNCATE jobs, order_items, orders CASCADE")
        await conn.execute("VACUUM ANALYZE jobs, orders, order_items, products")


async def _listen(conninfo: str) -> None:
    """Read the channel until cancelled, as an idle worker's LISTEN connection does."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute(f'LISTEN "{CHANNEL}"')
        async for _ in conn.notifies():
            pass


async def commit_rate(conninfo: str, variant: Variant, pairs: list[tuple[int, int]],
                      seconds: float) -> float:  # fmt: skip
    """Commits per second of `len(pairs)` clients looping for `seconds` (after a warm-up)."""
    await _empty_orders(conninfo)
    conns: list[Conn] = [await psycopg.AsyncConnection.connect(conninfo) for _ in pairs]
    counted = 0
    start, stop = time.perf_counter() + 0.3, time.perf_counter() + 0.3 + seconds

    async def client(conn: Conn, user: int, product: int) -> None:
        nonlocal counted
        while (now := time.perf_counter()) < stop:
            await checkout(conn, variant, user, product)
            counted += now >= start

    try:
        async with anyio.create_task_group() as listening:
            listening.start_soon(_listen, conninfo)
            async with anyio.create_task_group() as tg:
                for conn, (user, product) in zip(conns, pairs, strict=True):
                    tg.start_soon(client, conn, user, product)
            listening.cancel_scope.cancel()
    finally:
        for conn in conns:
            await conn.close()
    return counted / seconds


async def pickups(engine: AsyncEngine, variant: Variant, pairs: list[tuple[int, int]],
                  rate: float, seconds: float) -> tuple[int, list[float]]:  # fmt: skip
    """Checkouts at `rate` for `seconds`; how many, and each confirmation's pickup in ms."""
    conninfo = libpq_conninfo(engine.url)
    await _empty_orders(conninfo)
    committed: dict[str, float] = {}
    started: dict[str, float] = {}

    async def on_confirmation(job: Job) -> None:
        started[job.id] = time.perf_counter()

    router = Router()
    router.register(CONFIRMATION, on_confirmation)
    conns: list[Conn] = [await psycopg.AsyncConnection.connect(conninfo) for _ in pairs[:4]]

    async def client(k: int, conn: Conn, user: int, product: int) -> None:
        begin, step = time.perf_counter(), len(conns) / rate
        for n in range(int(seconds * rate / len(conns))):
            await anyio.sleep(max(0.0, begin + (n + k / len(conns)) * step - time.perf_counter()))
            job_id, at = await checkout(conn, variant, user, product)
            committed[job_id] = at

    try:
        async with (
            PostgresQueue(engine, poll_interval=timedelta(seconds=1)) as queue,
            anyio.create_task_group() as work,
        ):
            work.start_soon(Worker(queue=queue, router=router, concurrency=8).run)
            await anyio.sleep(0.5)  # the worker is listening
            async with anyio.create_task_group() as tg:
                for k, conn in enumerate(conns):
                    tg.start_soon(client, k, conn, *pairs[k])
            await anyio.sleep(1.5)  # the last jobs' pickup, a poll interval at most
            work.cancel_scope.cancel()
    finally:
        for conn in conns:
            await conn.close()
    return len(committed), [(started[i] - at) * 1000 for i, at in committed.items() if i in started]


def _p(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def rate_table(rates: dict[tuple[int, str], list[float]], ways: dict[str, Variant]) -> list[str]:
    """The commit rates (median of the runs) and each NOTIFY way's ratio to no NOTIFY."""
    head = ["clients", f"{ways['none'].label} tx/s"]
    for name in ("in_tx", "after"):
        head += [f"{ways[name].label} tx/s", "ratio"]
    lines = [_row(head), _row(["---"] * len(head))]
    for clients in CLIENTS:
        base = statistics.median(rates[(clients, "none")])
        cells = [str(clients), f"{base:,.0f}"]
        for name in ("in_tx", "after"):
            value = statistics.median(rates[(clients, name)])
            cells += [f"{value:,.0f}", f"{value / base:.2f}x"]
        lines.append(_row(cells))
    return lines


def pickup_table(found: dict[str, tuple[int, list[float]]], ways: dict[str, Variant]) -> list[str]:
    """Pickup latency per way of waking the worker."""
    head = ["variant", "picked up", "p50 ms", "p99 ms", "max ms"]
    lines = [_row(head), _row(["---"] * len(head))]
    for name, (sent, ms) in found.items():
        got = sorted(ms)
        worst = f"{got[-1]:,.1f}" if got else "-"
        cells = [f"{len(got)}/{sent}", f"{_p(got, 50):,.1f}", f"{_p(got, 99):,.1f}", worst]
        lines.append(_row([ways[name].label, *cells]))
    return lines


async def _measure(url: str, args: argparse.Namespace) -> None:
    engine = create_engine(url, pool_size=2)
    conninfo = libpq_conninfo(url)
    ways = variants(PostgresNotifier(engine))
    try:
        pairs = await _seed(conninfo, max(CLIENTS))
        rates: dict[tuple[int, str], list[float]] = {}
        for rep in range(args.reps):
            for clients in CLIENTS:
                names = list(ways)
                for name in names[rep % 3 :] + names[: rep % 3]:  # alternate who goes first
                    rate = await commit_rate(conninfo, ways[name], pairs[:clients], args.seconds)
                    rates.setdefault((clients, name), []).append(rate)
        found = {
            name: await pickups(engine, ways[name], pairs, args.rate, args.pickup_seconds)
            for name in ("in_tx", "after", "none")
        }
    finally:
        await engine.dispose()
    _report(rates, found, ways, args)


def _report(rates: dict[tuple[int, str], list[float]], found: dict[str, tuple[int, list[float]]],
            ways: dict[str, Variant], args: argparse.Namespace) -> None:  # fmt: skip
    print(f"\n## Checkout-shaped commits/s ({args.seconds:g} s a cell, median of {args.reps})\n")
    print("\n".join(rate_table(rates, ways)))
    title = f"{args.rate:g} checkouts/s for {args.pickup_seconds:g} s, idle poll every 1 s"
    print(f"\n## Pickup from the commit to the handler's start ({title})\n")
    print("\n".join(pickup_table(found, ways)))
    for clients in CLIENTS:
        base = statistics.median(rates[(clients, "none")])
        ratio = statistics.median(rates[(clients, "after")]) / base
        verdict = "met" if ratio >= RATIO_GOAL else "NOT met"
        print(f"\n{clients} clients: notifier {ratio:.2f}x no NOTIFY ", end="")
        print(f"(goal >= {RATIO_GOAL}x, {verdict})")
    got = found["after"][1]
    p50, p99 = _p(got, 50), _p(got, 99)
    verdict = "met" if p50 < P50_GOAL_MS and p99 < P99_GOAL_MS else "NOT met"
    print(f"notifier pickup p50 {p50:.1f} ms, p99 {p99:.1f} ms (goal < 5 / < 20 ms, {verdict})")


def main() -> None:
    """Parse arguments, measure on one server, print the tables and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run, 0.5 s a cell, 1 s of pickups")
    parser.add_argument("--reps", type=int, default=None, help="runs per cell (default 5)")
    parser.add_argument("--rate", type=float, default=100.0, help="checkouts/s for the pickups")
    args = parser.parse_args()
    args.reps = args.reps or (1 if args.quick else 5)
    # Short cells, many of them in alternation: the load of a shared machine drifts in seconds.
    args.seconds, args.pickup_seconds = (0.5, 1.0) if args.quick else (3.0, 10.0)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with database_url() as url:
        upgrade(url)
        anyio.run(_measure, url, args)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
