"""What the database timeouts cost a checkout: POST /v1/orders latency with and without them,
side by side.

Run: `uv run python -m bench.deadline_cost [--quick] [--reps N]`. Each rep serves the Postgres
shop (bench/checkout_server.py, the real queued handler) once on each engine below, in an order
that rotates per rep, and times bench.checkout_latency's load against it (16 clients on
keep-alive connections, 250 ms mean think time, a warm-up round first; embedded PostgreSQL
unless SKINCARE_BENCH_DATABASE_URL is set):

- "both": the engine the services build (`create_engine`): the server's statement_timeout on
  every connection, and the client's deadline (anyio.fail_after) around the connect, every
  statement and the commit;
- "server only": statement_timeout, no client deadline;
- "none": neither (an engine `create_engine` did not make).

Prints each rep's p50 and p99, then their medians over the reps and the median difference to
the same rep's "none";
then the same engines in this process, without HTTP: the median of checkouts placed one
after another (less noise than 16 clients over HTTP); then what the client deadline itself
costs, timed alone: one `anyio.fail_after(35)` scope
against one `anyio.fail_after(None)` (what an engine without a deadline enters), on uvloop as
skincare-api runs, and the seven a checkout enters (its connect, five statements, the commit).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time

import anyio
import anyio.lowlevel

from bench.checkout_latency import load, served
from bench.checkout_server import CLIENTS, checkout_engine, seed_postgres
from bench.embedded import database_url

ENGINES = {
    "both": "queued",
    "server only": "queued-server-timeout",
    "none": "queued-no-timeouts",
}


def _ms(timings: list[float], q: float) -> float:
    return 1000 * statistics.quantiles(timings, n=100, method="inclusive")[int(q * 100) - 1]


def one_run(url: str, variant: str, per_client: int) -> tuple[float, float]:
    """p50 and p99 (ms) of one served configuration under the load."""
    with served("postgres", variant, url) as seed:
        timings = anyio.run(load, seed["port"], seed["users"], seed["products"], per_client)
    return _ms(timings, 0.5), _ms(timings, 0.99)


def side_by_side(url: str, reps: int, per_client: int) -> dict[str, list[tuple[float, float]]]:
    """Every engine's (p50, p99) per rep, the engines' order rotating from rep to rep."""
    names = list(ENGINES)
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            found[name].append(one_run(url, ENGINES[name], per_client))
            p50, p99 = found[name][-1]
            print(f"rep {rep + 1} {name:<12} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms", flush=True)
    return found


SCOPES_PER_CHECKOUT = 7


async def _sequential(url: str, variant: str, count: int) -> float:
    """Median ms of one checkout, `count` placed one after another by one customer."""
    from skincare_core.shop.catalogue import ShopService
    from skincare_core.shop.checkout import CheckoutService
    from skincare_core.shop.system_clock import SystemClock
    from skincare_postgres import PostgresDatabase

    engine = checkout_engine(url, 2, variant)
    try:
        (user,), (product,) = await seed_postgres(engine, 1)
        db = PostgresDatabase(engine)
        shop, checkout = ShopService(uow=db), CheckoutService(uow=db, clock=SystemClock())
        timings = []
        for n in range(count):
            await shop.set_cart_quantity(user, product, 1)
            started = time.perf_counter()
            await checkout.checkout(user, f"seq-{n}")
            timings.append(time.perf_counter() - started)
        return 1000 * statistics.median(timings)
    finally:
        await engine.dispose()


def sequential(url: str, reps: int, count: int) -> dict[str, list[float]]:
    """Every engine's median checkout (ms) per rep, the order rotating from rep to rep."""
    names = list(ENGINES)
    found: dict[str, list[float]] = {name: [] for name in names}
    options = {"use_uvloop": importlib.util.find_spec("uvloop") is not None}
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            ms = anyio.run(_sequential, url, ENGINES[name], count, backend_options=options)
            found[name].append(ms)
            print(f"rep {rep + 1} {name:<12} one customer: checkout {ms:.3f} ms", flush=True)
    return found


async def _scopes(deadline: float | None, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        with anyio.fail_after(deadline):
            await anyio.lowlevel.checkpoint()
    return (time.perf_counter() - started) / count


def scope_cost(count: int = 100_000, reps: int = 5) -> float:
    """Microseconds one deadline adds to a scope (median of `reps` alternating timings)."""
    extra = []
    for _ in range(reps):
        options = {"use_uvloop": importlib.util.find_spec("uvloop") is not None}
        with_deadline = anyio.run(_scopes, 35.0, count, backend_options=options)
        without = anyio.run(_scopes, None, count, backend_options=options)
        extra.append(with_deadline - without)
    return 1e6 * statistics.median(extra)


def main() -> None:
    """Measure, then print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 checkouts per client, not 40")
    parser.add_argument("--reps", type=int, default=5, help="runs of each engine (default 5)")
    args = parser.parse_args()
    per_client = 5 if args.quick else 40
    before = os.getloadavg()[0]
    with database_url() as url:
        from skincare_postgres import upgrade

        upgrade(url)
        found = side_by_side(url, args.reps, per_client)
        alone = sequential(url, args.reps, 50 if args.quick else 1000)
    _print(found, per_client, args.reps)
    _print_sequential(alone)
    per_scope = scope_cost(10_000 if args.quick else 100_000)
    print(
        f"\nclient deadline alone: {per_scope:.2f} us a scope,"
        f" {SCOPES_PER_CHECKOUT * per_scope:.1f} us a checkout"
    )
    print(f"load average (1 min): {before:.2f} before, {os.getloadavg()[0]:.2f} after")


def _print(found: dict[str, list[tuple[float, float]]], per_client: int, reps: int) -> None:
    print(
        f"\nPOST /v1/orders, {CLIENTS} clients x {per_client} checkouts a run;"
        f" median of {reps} runs each\n"
    )
    print("| timeouts | p50 ms | p99 ms | p50 - none | p99 - none |")
    print("| --- | --- | --- | --- | --- |")
    for name, runs in found.items():
        p50, p99 = (statistics.median(run[i] for run in runs) for i in (0, 1))
        # Paired with the same rep's "none": the machine's load drifts more between reps.
        d50, d99 = (
            statistics.median(a[i] - b[i] for a, b in zip(runs, found["none"], strict=True))
            for i in (0, 1)
        )
        print(f"| {name} | {p50:.2f} | {p99:.2f} | {d50:+.2f} | {d99:+.2f} |")


def _print_sequential(found: dict[str, list[float]]) -> None:
    print("\none customer in this process, no HTTP: median checkout, median over the runs\n")
    print("| timeouts | checkout ms | - none |")
    print("| --- | --- | --- |")
    for name, runs in found.items():
        paired = statistics.median(a - b for a, b in zip(runs, found["none"], strict=True))
        print(f"| {name} | {statistics.median(runs):.3f} | {paired:+.3f} |")


if __name__ == "__main__":
    main()
