"""API checkout capacity: the most checkouts/s at which POST /v1/orders p99 stays under 25 ms, at
16 and 64 clients, on the real API (the confirmation job queued through the outbox).

Run: `uv run python -m bench.checkout_capacity [--quick]`. Each client count is served by uvicorn
in a child process (bench/checkout_server.py, variant queued) on the embedded PostgreSQL (or
SKINCARE_BENCH_DATABASE_URL), while a LISTEN connection here reads the default queue's channel as
an idle worker would. The offered rate steps up (10, 25, then by 50): each
client, on one keep-alive connection, puts one item in its cart and checks out on a fixed
schedule (open loop: a slow answer does not slow the offer).
A step holds when the POST p99 is under 25 ms and at least 95 % of the offered checkouts were
done in time; the climb stops at two steps in a row that did not hold (one slow fsync on a
shared machine fails a short step), and the capacity is the highest step that held.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from datetime import timedelta
from typing import Any

import anyio
import psycopg

from bench.checkout_latency import served
from bench.checkout_server import SETTINGS
from bench.embedded import database_url
from bench.lean_http import LeanConnection
from skincare_http import issue_token
from skincare_postgres.engine import libpq_conninfo

CLIENTS = (16, 64)
P99_GOAL_MS = 25.0


async def _client(connection: LeanConnection, user: int, product: int, interval: float,
                  start: float, stop: float) -> list[float]:  # fmt: skip
    token = issue_token(SETTINGS.jwt_secret, SETTINGS.jwt_issuer, user, timedelta(hours=1))
    auth = {"Authorization": f"Bearer {token}"}
    timings: list[float] = []
    due = start
    while due < stop:
        await anyio.sleep(max(0.0, due - time.perf_counter()))
        cart = f"/v1/cart/items/{product}"
        put = await connection.request("PUT", cart, auth, {"quantity": 1})
        assert put.status == 200, put.body
        begin = time.perf_counter()
        key = {**auth, "Idempotency-Key": uuid.uuid4().hex}
        response = await connection.request("POST", "/v1/orders", key)
        timings.append(time.perf_counter() - begin)
        assert response.status == 201, response.body
        due += interval
    return timings


async def step(seed: dict[str, Any], connections: list[LeanConnection], rate: float,
               seconds: float) -> list[float]:  # fmt: skip
    """POST latencies (s) with the clients offering `rate` checkouts/s for `seconds`."""
    users, goods = seed["users"], seed["products"]
    interval, now = len(users) / rate, time.perf_counter()
    results: list[list[float]] = []

    async def one(k: int) -> None:
        first = now + k * interval / len(users)
        results.append(await _client(connections[k], users[k], goods[k], interval, first,
                                     now + seconds))  # fmt: skip

    async with anyio.create_task_group() as tg:
        for k in range(len(users)):
            tg.start_soon(one, k)
    return [t for timings in results for t in timings]


async def _listen(conninfo: str) -> None:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute('LISTEN "skincare_jobs.default"')
        async for _ in conn.notifies():
            pass


async def capacity(url: str, seed: dict[str, Any], rates: list[float],
                   seconds: float) -> tuple[float, list[str]]:  # fmt: skip
    """The last rate that held, and one line per step tried."""
    held, lines, misses = 0.0, [], 0
    # Keep-alive connections for the whole climb: a step measures checkouts, not connecting.
    connections = [await LeanConnection.open(seed["port"]) for _ in seed["users"]]
    async with anyio.create_task_group() as tg:
        tg.start_soon(_listen, libpq_conninfo(url))
        await step(seed, connections, rates[0], 2.0)  # warm-up
        for rate in rates:
            timings = await step(seed, connections, rate, seconds)
            p99 = 1000 * statistics.quantiles(timings, n=100, method="inclusive")[98]
            done = len(timings) / (rate * seconds)
            ok = p99 < P99_GOAL_MS and done >= 0.95
            verdict = "held" if ok else "did not hold"
            lines.append(f"  {rate:>5.0f}/s: p99 {p99:6.1f} ms, {done:4.0%} done, {verdict}")
            misses = 0 if ok else misses + 1
            if misses == 2:
                break
            held = rate if ok else held
        tg.cancel_scope.cancel()
    for connection in connections:
        await connection.close()
    return held, lines


def main() -> None:
    """Step each client count up to its capacity and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two short steps")
    parser.add_argument("--seconds", type=float, default=5.0, help="per step")
    args = parser.parse_args()
    rates = [25.0, 50.0] if args.quick else [10.0, 25.0, *(50.0 * n for n in range(1, 21))]
    seconds = 1.0 if args.quick else args.seconds
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    found: dict[int, float] = {}
    with database_url() as url:
        from skincare_postgres import upgrade

        upgrade(url)
        for clients in CLIENTS:
            with served("postgres", "queued", url, clients) as seed:
                found[clients], lines = anyio.run(capacity, url, seed, rates, seconds)
            print(f"{clients} clients:", *lines, sep="\n")
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print(f"## Checkouts/s with POST /v1/orders p99 < {P99_GOAL_MS:.0f} ms ({seconds:g} s steps)\n")
    print("| clients | checkouts/s |")
    print("| --- | --- |")
    for clients in CLIENTS:
        print(f"| {clients} | {found[clients]:,.0f} |")


if __name__ == "__main__":
    main()
