"""Checkout latency: POST /v1/orders p50/p99 at 16 concurrent clients, queued vs inline e-mail.

Run: `uv run python -m bench.checkout_latency [--quick]`. Each configuration is served by
uvicorn on 127.0.0.1 in a child process (bench/checkout_server.py, so the load generator does
not share its GIL), on the in-memory kit and on the Postgres adapters (SKINCARE_BENCH_DATABASE_URL,
or an embedded server).
"queued" is the real handler: the confirmation job goes to the outbox in the order's
transaction. "inline" awaits a 300 ms e-mail provider before answering (bench-only wrapper).
Each client has its own keep-alive connection (bench/lean_http.py), puts one item in its cart,
times the checkout, and thinks (see THINK_SECONDS) before the next order."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import anyio

from bench.checkout_server import CLIENTS, SETTINGS
from bench.embedded import database_url
from bench.lean_http import LeanConnection
from skincare_http import issue_token

# Each client thinks between orders (exponential, this mean), so 16 clients offer a load the
# server can carry: a closed loop without think time measures saturation, not checkout latency.
THINK_SECONDS = 0.25


async def _client(port: int, user: int, product: int, n: int) -> list[float]:
    token = issue_token(SETTINGS.jwt_secret, SETTINGS.jwt_issuer, user, timedelta(hours=1))
    auth = {"Authorization": f"Bearer {token}"}
    connection = await LeanConnection.open(port)
    timings = []
    try:
        # Clients start apart, as users do: a synchronized start would measure one burst.
        await anyio.sleep(random.uniform(0, THINK_SECONDS))
        for _ in range(n):
            put = await connection.request(
                "PUT", f"/v1/cart/items/{product}", auth, {"quantity": 1}
            )
            assert put.status == 200, put.body
            start = time.perf_counter()
            response = await connection.request(
                "POST", "/v1/orders", {**auth, "Idempotency-Key": uuid.uuid4().hex}
            )
            timings.append(time.perf_counter() - start)
            assert response.status == 201, response.body
            await anyio.sleep(random.expovariate(1 / THINK_SECONDS))
    finally:
        await connection.close()
    return timings


async def load(
    port: int, users: list[int], goods: list[int], per_client: int, warm_up: int = 2
) -> list[float]:
    """Checkout latencies (s) from CLIENTS concurrent clients, after `warm_up` untimed
    checkouts each."""
    results: list[list[float]] = []
    for rounds, keep in ((warm_up, False), (per_client, True)):

        async def one(user: int, good: int, rounds: int = rounds, keep: bool = keep) -> None:
            timings = await _client(port, user, good, rounds)
            if keep:
                results.append(timings)

        async with anyio.create_task_group() as tg:
            for user, good in zip(users, goods, strict=True):
                tg.start_soon(one, user, good)
    return [t for timings in results for t in timings]


@contextmanager
def served(
    backend: str, variant: str, url: str, clients: int = CLIENTS
) -> Iterator[dict[str, Any]]:
    """A child process serving one configuration for `clients`; yields its port and seed ids."""
    command = [sys.executable, "-m", "bench.checkout_server", backend, variant, url, str(clients)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield json.loads(child.stdout.readline())
    finally:
        child.terminate()
        child.wait(timeout=30)


def _ms(timings: list[float], q: float) -> float:
    return 1000 * statistics.quantiles(timings, n=1000, method="inclusive")[int(q * 1000) - 1]


def main() -> None:
    """Measure every configuration and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer checkouts")
    args = parser.parse_args()
    per_client = {"queued": 2 if args.quick else 40, "inline": 1 if args.quick else 10}
    warm_up = 1 if args.quick else 2
    # The machine is shared: the load before the run says how much the figures can be trusted.
    load_before = os.getloadavg()[0]
    rows = []
    with database_url() as url:
        from skincare_postgres import upgrade

        upgrade(url)
        for backend in ("memory", "postgres"):
            for variant in ("queued", "inline"):
                with served(backend, variant, url) as seed:
                    timings = anyio.run(
                        load,
                        seed["port"],
                        seed["users"],
                        seed["products"],
                        per_client[variant],
                        warm_up,
                    )
                rows.append(
                    (
                        backend,
                        variant,
                        len(timings),
                        _ms(timings, 0.5),
                        _ms(timings, 0.99),
                        1000 * max(timings),
                    )
                )
    _print(rows)
    print(f"\n1-minute load average before the run: {load_before:.2f} on {os.cpu_count()} CPUs")


def _print(rows: list[tuple[str, str, int, float, float, float]]) -> None:
    print(
        f"POST /v1/orders, {CLIENTS} concurrent clients (think time {THINK_SECONDS * 1000:.0f} ms"
        " mean), uvicorn on 127.0.0.1\n"
    )
    print(f"{'backend':<9} {'variant':<7} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for backend, variant, n, p50, p99, top in rows:
        print(f"{backend:<9} {variant:<7} {n:>5} {p50:>8.1f} {p99:>8.1f} {top:>8.1f}")
    print()
    p99s = {(b, v): p for b, v, _, _, p, _ in rows}
    for backend in ("memory", "postgres"):
        queued, inline = p99s[(backend, "queued")], p99s[(backend, "inline")]
        print(
            f"{backend}: inline/queued p99 = {inline / queued:.1f}x "
            f"(goal > 20x); queued p99 {queued:.1f} ms (goal < 25 ms)"
        )


if __name__ == "__main__":
    main()
