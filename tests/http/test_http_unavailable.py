"""A database outage is a 503 with Retry-After, never a 500, and the API recovers at once.

Runs on real PostgreSQL: a server of the test's own that the test stops and starts, and the
session's server where a connection is killed in the middle of a checkout's transaction.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import anyio
import httpx
import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.shop.ports import Clock
from skincare_core.testing.shop import ManualClock
from skincare_http import create_app
from skincare_postgres import PostgresDatabase, PostgresUnitOfWork, create_engine
from skincare_postgres.engine import libpq_conninfo
from tests.http.http_support import SETTINGS, Backend, Seed, bearer, seed_shop, services_for, signed
from tests.http.pg_backend import PostgresBackend
from tests.restartable_postgres import RestartablePostgres, restartable_postgres

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
Client = AsyncTestClient[Litestar]
UNAVAILABLE = "https://skincare.example/problems/service-unavailable"
OUTAGE_SECONDS = 1.5


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[RestartablePostgres]:
    with restartable_postgres(tmp_path / "pgdata") as server:
        yield server


async def _every_route(
    client: Client, seed: Seed, order_id: int, clock: Clock
) -> list[httpx.Response]:
    alice = bearer(seed.alice.id)
    event = {
        "event_id": "evt-outage",
        "order_id": order_id,
        "status": "paid",
        "amount_rupiah": 150_000,
    }
    body, signed_headers = signed(event, int(clock.now().timestamp()))
    return [
        await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 1}, headers=alice),
        await client.post("/v1/orders", headers={**alice, "Idempotency-Key": "during"}),
        await client.get("/v1/products", headers=alice),
        await client.post("/v1/payments/webhook", content=body, headers=signed_headers),
    ]


def _assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, (response.request.url, response.text)
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == UNAVAILABLE
    assert int(response.headers["retry-after"]) >= 1


async def _checkout_until_placed(client: Client, seed: Seed, key: str) -> float:
    """Seconds until POST /v1/orders with `key` answers 201 (retrying the same key)."""
    started = time.monotonic()
    headers = {**bearer(seed.alice.id), "Idempotency-Key": key}
    for _ in range(250):
        if (await client.post("/v1/orders", headers=headers)).status_code == 201:
            return time.monotonic() - started
        await anyio.sleep(0.02)
    raise AssertionError("checkout did not answer 201 within 5 s of the database's return")


async def test_while_the_database_is_down_every_route_answers_503_then_201_within_a_second(
    pg: RestartablePostgres, caplog: pytest.LogCaptureFixture
) -> None:
    engine = create_engine(pg.url)
    seed = await seed_shop(PostgresBackend(engine))
    clock, db = ManualClock(), PostgresDatabase(engine)
    app = create_app(services=services_for(db, clock, db), settings=SETTINGS)
    try:
        async with AsyncTestClient(app=app) as client:
            put = await client.put(
                f"/v1/cart/items/{seed.serum.id}",
                json={"quantity": 1},
                headers=bearer(seed.alice.id),
            )
            assert put.status_code == 200
            pg.stop()
            answered = []
            with caplog.at_level(logging.WARNING):
                deadline = time.monotonic() + OUTAGE_SECONDS
                while time.monotonic() < deadline:
                    answered += await _every_route(client, seed, 1, clock)
            pg.start()
            recovery = await _checkout_until_placed(client, seed, "after")
    finally:
        await engine.dispose()

    for response in answered:
        _assert_unavailable(response)
    warnings = [r for r in caplog.records if r.getMessage() == "http.service_unavailable"]
    assert len(warnings) == len(answered)
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in warnings)
    assert [r for r in caplog.records if r.exc_info] == []
    assert recovery < 1.0


# Ends the backends of this database's open transactions; the killer's own is not one.
_KILL_TRANSACTIONS = (
    "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
    " WHERE datname = current_database() AND state = 'idle in transaction'"
)


class KillingDatabase(PostgresDatabase):
    """Its next `kills` units of work lose their connection just before they commit."""

    def __init__(self, engine: AsyncEngine, url: str, kills: int) -> None:
        super().__init__(engine)
        self.conninfo = libpq_conninfo(url)
        self.kills = kills

    def __call__(self) -> PostgresUnitOfWork:
        return KillingUnitOfWork(self)


class KillingUnitOfWork(PostgresUnitOfWork):
    """A unit of work whose connection the server terminates inside the transaction."""

    def __init__(self, db: KillingDatabase) -> None:
        super().__init__(db.engine)
        self._db = db

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self._db.kills > 0:
            self._db.kills -= 1
            async with await psycopg.AsyncConnection.connect(self._db.conninfo) as admin:
                await admin.execute(_KILL_TRANSACTIONS)
        await super().__aexit__(exc_type, exc, tb)


async def test_a_connection_killed_inside_checkout_is_503_and_the_retry_places_one_order(
    postgres_backend: Backend, http_database_url: str
) -> None:
    assert isinstance(postgres_backend, PostgresBackend)
    seed = await seed_shop(postgres_backend)
    db = KillingDatabase(postgres_backend.engine, http_database_url, kills=0)
    app = create_app(services=services_for(db, ManualClock(), db), settings=SETTINGS)
    alice = {**bearer(seed.alice.id), "Idempotency-Key": "k-1"}
    async with AsyncTestClient(app=app) as client:
        await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 2}, headers=alice)
        db.kills = 1
        killed = await client.post("/v1/orders", headers=alice)
        retried = await client.post("/v1/orders", headers=alice)
        again = await client.post("/v1/orders", headers=alice)

    _assert_unavailable(killed)
    assert retried.status_code == 201
    assert again.json() == retried.json()
    async with db() as uow:
        serum = await uow.products.get(seed.serum.id)
    assert serum is not None
    assert serum.stock == 5 - 2
    # The one order's confirmation and expiry.
    assert len(await postgres_backend.jobs()) == 2
    assert await _orders_of(http_database_url, seed.alice.id) == 1


async def _orders_of(url: str, user_id: int) -> int:
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url)) as conn:
        cursor = await conn.execute("SELECT count(*) FROM orders WHERE user_id = %s", [user_id])
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])
