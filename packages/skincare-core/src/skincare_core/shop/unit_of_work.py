"""The shop's unit of work: one transaction over every repository and the outbox."""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

from skincare_core.jobs.ports import Outbox
from skincare_core.shop.repositories import (
    CartRepository,
    InvoiceRepository,
    NotificationRepository,
    OrderRepository,
    PaymentRepository,
    ProductRepository,
    ReportRepository,
    SalesRepository,
    UserRepository,
)


class UnitOfWork(Protocol):
    """One transaction: commit on clean exit, roll back on error."""

    @property
    def users(self) -> UserRepository: ...

    @property
    def products(self) -> ProductRepository: ...

    @property
    def carts(self) -> CartRepository: ...

    @property
    def orders(self) -> OrderRepository: ...

    @property
    def payments(self) -> PaymentRepository: ...

    @property
    def notifications(self) -> NotificationRepository: ...

    @property
    def invoices(self) -> InvoiceRepository: ...

    @property
    def sales(self) -> SalesRepository: ...

    @property
    def reports(self) -> ReportRepository: ...

    @property
    def outbox(self) -> Outbox: ...

    async def __aenter__(self) -> UnitOfWork: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class UnitOfWorkFactory(Protocol):
    """Makes a fresh unit of work per use."""

    def __call__(self) -> UnitOfWork: ...
