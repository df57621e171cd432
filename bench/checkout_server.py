"""The server side of bench.checkout_latency and bench.checkout_capacity: one configuration under
uvicorn, in a child process.

Run by the benchmark as `python -m bench.checkout_server BACKEND VARIANT URL [CLIENTS]`: it seeds
the shop (one user and product per client, CLIENTS defaults to 16), prints {"port", "users",
"products"} on stdout and serves until terminated. BACKEND is memory or postgres; VARIANT is
queued (the real handler) or inline (a 300 ms e-mail before the answer).
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.models import Order
from skincare_core.shop.ports import OrderEmail
from skincare_core.shop.system_clock import SystemClock
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import InMemoryDatabase, RecordingEmailService
from skincare_http import ApiServices, ApiSettings, create_app

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

# One seeded user and product per benchmark client.
CLIENTS = 16
SETTINGS = ApiSettings(
    jwt_secret="bench-jwt-secret-of-at-least-32-bytes",
    jwt_issuer="bench",
    webhook_secret="bench-webhook",
)


class InlineSendCheckout(CheckoutService):
    """The anti-pattern the design avoids: send the confirmation before answering."""

    def __init__(self, *, uow: UnitOfWorkFactory, email: RecordingEmailService) -> None:
        super().__init__(uow=uow, clock=SystemClock())
        self._uow_factory = uow
        self._email = email

    async def checkout(self, user_id: int, idempotency_key: str) -> Order:
        """Place the order, then wait for the provider."""
        order = await super().checkout(user_id, idempotency_key)
        async with self._uow_factory() as uow:
            user = await uow.users.get(user_id)
        data = OrderEmail(order.order_number, order.items, order.total_rupiah, idempotency_key)
        await self._email.send_order_confirmation(user.email if user else "", data)
        return order


class _Alive:
    async def ping(self) -> None:
        """The in-memory kit is always reachable."""


async def _memory_shop() -> tuple[UnitOfWorkFactory, Any, list[int], list[int]]:
    db = InMemoryDatabase(outbox_sink=InMemoryQueue())
    users = [db.add_user(f"bench{n}@example.test").id for n in range(CLIENTS)]
    goods = [db.add_product(f"BENCH-{n}", "Bench serum", 150_000, 10**9).id for n in users]
    return db, _Alive(), users, goods


async def _postgres_shop(
    url: str, clients: int
) -> tuple[UnitOfWorkFactory, Any, list[int], list[int]]:
    from skincare_postgres import PostgresDatabase, create_engine

    engine = create_engine(url, pool_size=clients + 4)
    ids, goods = await _seed_postgres(engine, clients)
    db = PostgresDatabase(engine)
    return db, db, ids, goods


async def _seed_postgres(engine: AsyncEngine, clients: int) -> tuple[list[int], list[int]]:
    """Empty every table, then add one user and one well-stocked product per client: their ids."""
    from sqlalchemy import insert, text

    from skincare_postgres.schema import metadata, products, users

    tables = ", ".join(t.name for t in metadata.sorted_tables)
    async with engine.begin() as conn:
        await conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
        rows = [{"email": f"bench{n}@example.test"} for n in range(clients)]
        ids = (await conn.execute(insert(users).returning(users.c.id), rows)).scalars().all()
        goods = [{"sku": f"BENCH-{n}", "name": "Bench serum", "price_rupiah": 150_000,
                  "stock": 10**9} for n in ids]  # fmt: skip
        pids = await conn.execute(insert(products).returning(products.c.id), goods)
    return list(ids), list(pids.scalars().all())


async def serve(backend: str, variant: str, url: str, clients: int = CLIENTS) -> None:
    """Seed, print {"port", "users", "products"} on stdout, serve until terminated."""
    uow, readiness, users, goods = await (
        _memory_shop() if backend == "memory" else _postgres_shop(url, clients)
    )
    checkout = CheckoutService(uow=uow, clock=SystemClock())
    if variant == "inline":
        checkout = InlineSendCheckout(uow=uow, email=RecordingEmailService(delay=0.3))
    services = ApiServices(
        checkout=checkout,
        webhooks=PaymentWebhookService(uow=uow),
        shop=ShopService(uow=uow),
        readiness=readiness,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # Accepted sockets inherit this: without it keep-alive answers wait on delayed ACKs (40 ms).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(256)  # connections wait in the backlog until uvicorn accepts them
    config = uvicorn.Config(
        create_app(services=services, settings=SETTINGS), log_level="warning", access_log=False
    )
    print(
        json.dumps({"port": sock.getsockname()[1], "users": users, "products": goods}), flush=True
    )
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    # The event loop skincare-api runs on (uvicorn picks uvloop when it is installed).
    uvloop = importlib.util.find_spec("uvloop") is not None
    backend, variant, url = sys.argv[1:4]
    clients = int(sys.argv[4]) if len(sys.argv) > 4 else CLIENTS
    anyio.run(serve, backend, variant, url, clients, backend_options={"use_uvloop": uvloop})
