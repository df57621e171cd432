"""The Postgres unit of work: one transaction on one connection, with every repository."""

from __future__ import annotations

from types import TracebackType

import anyio
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from skincare_core.jobs.envelope import RoutedOutbox
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.jobs.tracing import HeaderSource
from skincare_postgres.driver import Autocommit, Driver
from skincare_postgres.engine import client_deadline
from skincare_postgres.errors import DatabaseUnavailable, is_unavailable, unavailable_as_error
from skincare_postgres.jobs.notifier import PostgresNotifier
from skincare_postgres.jobs.outbox_writer import PostgresOutboxWriter
from skincare_postgres.schema import JOBS_CHANNEL
from skincare_postgres.shop.catalog import PostgresCarts, PostgresProducts, PostgresUsers
from skincare_postgres.shop.orders import PostgresOrders
from skincare_postgres.shop.payments import (
    PostgresInvoices,
    PostgresNotifications,
    PostgresPayments,
)
from skincare_postgres.shop.reports import PostgresReports, PostgresSales


class PostgresDatabase:
    """The shop's database; call it for a fresh unit of work (a core UnitOfWorkFactory).

    Its outbox puts each job on the named queue `routes` gives its type, with the headers
    `job_headers` gives (the trace context) added to the job's own. Its units of work share
    `notifier` (None: one of its own), which wakes the queues after each commit. `ordered`
    False (the SQS backend's queues, which have no order): an outbox job with a priority other
    than the default is PriorityUnsupported.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        routes: QueueRoutes | None = None,
        channel: str = JOBS_CHANNEL,
        job_headers: HeaderSource | None = None,
        notifier: PostgresNotifier | None = None,
        ordered: bool = True,
    ) -> None:
        self.engine = engine
        self._ordered = ordered
        self._routes = QueueRoutes() if routes is None else routes
        self._channel = channel
        self._job_headers = job_headers
        self._autocommit = Autocommit(engine)
        self.notifier = PostgresNotifier(engine) if notifier is None else notifier

    def __call__(self) -> PostgresUnitOfWork:
        return PostgresUnitOfWork(
            self.engine,
            routes=self._routes,
            channel=self._channel,
            job_headers=self._job_headers,
            notifier=self.notifier,
            ordered=self._ordered,
        )

    async def ping(self) -> None:
        """Return when the database answers; DatabaseUnavailable when it does not."""
        await self._autocommit.run("SELECT 1", {})


class PostgresUnitOfWork:
    """Commits on a clean exit, rolls back on error; a lost database raises DatabaseUnavailable.

    Opening, each statement, and the commit or rollback each give up after the engine's
    client-side deadline. A commit given up on may still have happened: the caller retries
    with its idempotency key, as after any lost commit. Once committed, the queues its outbox
    added jobs to are woken through `notifier`. `ordered` as `PostgresDatabase`'s.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        routes: QueueRoutes | None = None,
        channel: str = JOBS_CHANNEL,
        job_headers: HeaderSource | None = None,
        notifier: PostgresNotifier | None = None,
        ordered: bool = True,
    ) -> None:
        self._engine = engine
        self._ordered = ordered
        self._routes = QueueRoutes() if routes is None else routes
        self._channel = channel
        self._job_headers = job_headers
        self._deadline = client_deadline(engine)
        self._notifier = PostgresNotifier(engine) if notifier is None else notifier
        self._conn: AsyncConnection | None = None

    async def __aenter__(self) -> PostgresUnitOfWork:
        with unavailable_as_error(), anyio.fail_after(self._deadline):
            conn = await self._engine.connect()
            try:
                await conn.begin()
            except BaseException:
                await _discard(conn)
                raise
        self._conn = conn
        driver = Driver(conn, deadline=self._deadline)
        self.users = PostgresUsers(driver)
        self.products = PostgresProducts(driver)
        self.carts = PostgresCarts(driver)
        self.orders = PostgresOrders(driver)
        self.payments = PostgresPayments(driver)
        self.notifications = PostgresNotifications(driver)
        self.invoices = PostgresInvoices(driver)
        self.sales = PostgresSales(driver)
        self.reports = PostgresReports(driver)
        self._writer = PostgresOutboxWriter(driver, self._channel, ordered=self._ordered)
        self.outbox = RoutedOutbox(self._writer, self._routes, self._job_headers)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if exc is not None and is_unavailable(exc):
            # The connection is lost or mid-statement (a deadline): a rollback could hang too.
            await _discard(conn)
            raise DatabaseUnavailable(f"database unavailable: {exc}") from exc
        try:
            with unavailable_as_error(), anyio.fail_after(self._deadline):
                if exc_type is None:
                    await conn.commit()
                    self._notifier.wake(self._writer.woken)
                else:
                    await conn.rollback()
        except BaseException:
            await _discard(conn)
            raise
        await _close_quietly(conn)


async def _discard(conn: AsyncConnection) -> None:
    # Out of the pool without a word to the server: a reset-on-return rollback sent into a
    # stalled network would wait forever. The server rolls back when the socket closes.
    with anyio.CancelScope(shield=True):
        try:
            await conn.invalidate()
        finally:
            await _close_quietly(conn)


async def _close_quietly(conn: AsyncConnection) -> None:
    # Closing a connection the server already dropped must not hide the original error.
    try:
        await conn.close()
    except Exception as error:
        if not is_unavailable(error):
            raise
