"""An in-memory shop database whose units of work are serialisable transactions.

Each unit of work takes a lock, works on a copy of the state and swaps it in on commit, so a
rollback leaves nothing behind; outbox jobs reach the queue only on commit, like the real outbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import anyio

from skincare_core.jobs.envelope import Envelope, RoutedOutbox
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.shop.models import Product, User
from skincare_core.testing.shop import memory_repos as repos
from skincare_core.testing.shop.memory_notifications import Notifications
from skincare_core.testing.shop.memory_outbox import MemoryOutboxWriter, OutboxSink
from skincare_core.testing.shop.memory_reports import Reports, Sales
from skincare_core.testing.shop.memory_state import ShopState


class InMemoryDatabase:
    """The shop's tables in memory. Call it to get a unit of work (it is a UnitOfWorkFactory).

    Outbox jobs go to the queue `routes` names for their type, on `outbox_sink` at commit.
    """

    def __init__(self, *, outbox_sink: OutboxSink, routes: QueueRoutes | None = None) -> None:
        self.state = ShopState()
        self.routes = QueueRoutes() if routes is None else routes
        self.sink = outbox_sink
        self._lock: anyio.Lock | None = None
        self.faults: dict[str, list[BaseException]] = {}
        self.commits = 0

    def __call__(self) -> InMemoryUnitOfWork:
        return InMemoryUnitOfWork(self)

    def add_user(self, email: str, language: str = "id") -> User:
        """Seed a user."""
        user = User(self._next_id(), email, language)
        self.state.users[user.id] = user
        return user

    def add_product(self, sku: str, name: str, price_rupiah: int, stock: int) -> Product:
        """Seed a product."""
        product = Product(self._next_id(), sku, name, price_rupiah, stock)
        self.state.products[product.id] = product
        return product

    def fail_next(self, operation: str, error: BaseException) -> None:
        """Make the next call of a repository operation (e.g. "mark_notified") raise `error`."""
        self.faults.setdefault(operation, []).append(error)

    def check_fault(self, operation: str) -> None:
        """Raise a fault injected for `operation`, if any."""
        pending = self.faults.get(operation)
        if pending:
            raise pending.pop(0)

    def lock(self) -> anyio.Lock:
        """The lock that serialises units of work (created in the running event loop)."""
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    async def commit(self, state: ShopState, envelopes: Sequence[Envelope]) -> None:
        """Swap in the unit of work's state and send its outbox jobs."""
        self.state = state
        self.commits += 1
        await self.sink.enqueue_many(envelopes)

    def _next_id(self) -> int:
        value = self.state.next_id
        self.state.next_id += 1
        return value


class InMemoryUnitOfWork:
    """One serialisable transaction over an InMemoryDatabase."""

    def __init__(self, db: InMemoryDatabase) -> None:
        self._db = db
        self.state = ShopState()
        self.pending_jobs: list[Envelope] = []

    async def __aenter__(self) -> InMemoryUnitOfWork:
        await self._db.lock().acquire()
        self.state = self._db.state.snapshot()
        self.users = repos.Users(self)
        self.products = repos.Products(self)
        self.carts = repos.Carts(self)
        self.orders = repos.Orders(self)
        self.payments = repos.Payments(self)
        self.notifications = Notifications(self)
        self.invoices = repos.Invoices(self)
        self.sales = Sales(self)
        self.reports = Reports(self)
        self.outbox = RoutedOutbox(MemoryOutboxWriter(self, self._db.sink), self._db.routes)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc_type is None:
                await self._db.commit(self.state, self.pending_jobs)
        finally:
            self._db.lock().release()

    def fault(self, operation: str) -> None:
        """Raise an injected fault for `operation`."""
        self._db.check_fault(operation)

    def next_id(self) -> int:
        """A fresh row id."""
        value = self.state.next_id
        self.state.next_id += 1
        return value
