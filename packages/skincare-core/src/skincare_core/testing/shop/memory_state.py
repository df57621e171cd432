"""The in-memory shop's tables, and what a repository needs of the transaction it runs in."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import attrs
from attrs import define, field

from skincare_core.jobs.envelope import Envelope
from skincare_core.shop.models import (
    InvoiceRecord,
    NotificationType,
    Order,
    Payment,
    Product,
    SendClaim,
    User,
)


@define
class ShopState:
    """Every table, as plain dicts."""

    users: dict[int, User] = field(factory=dict)
    products: dict[int, Product] = field(factory=dict)
    carts: dict[tuple[int, int], int] = field(factory=dict)
    orders: dict[int, Order] = field(factory=dict)
    order_keys: dict[tuple[int, str], int] = field(factory=dict)
    payments: dict[str, Payment] = field(factory=dict)
    notifications: dict[tuple[int, NotificationType], object] = field(factory=dict)
    send_claims: dict[tuple[int, NotificationType], SendClaim] = field(factory=dict)
    invoices: dict[int, InvoiceRecord] = field(factory=dict)
    reports_sent: dict[str, datetime] = field(factory=dict)
    report_claims: dict[str, SendClaim] = field(factory=dict)
    next_id: int = 1

    def snapshot(self) -> ShopState:
        """A copy a transaction may change; values are frozen, so copying the dicts suffices."""
        copy = attrs.evolve(self)
        for a in attrs.fields(ShopState):
            if isinstance(value := getattr(copy, a.name), dict):
                setattr(copy, a.name, dict(value))
        return copy


class Transaction(Protocol):
    """A unit of work as its repositories see it: a private copy of the tables and an outbox."""

    state: ShopState
    pending_jobs: list[Envelope]

    def fault(self, operation: str) -> None:
        """Raise an injected fault for `operation`, if any."""

    def next_id(self) -> int:
        """A fresh row id."""
