"""Domain errors, named for what happened; adapters translate them at the edge."""

from __future__ import annotations

from datetime import timedelta


class PermanentJobError(Exception):
    """A job that can never succeed: dead-letter it at once, do not retry."""


class RetryLater(Exception):
    """Retry after exactly `delay` (a provider's Retry-After) instead of the backoff."""

    def __init__(self, delay: timedelta, reason: str = "retry later") -> None:
        super().__init__(reason)
        self.delay = delay


class InvalidJob(PermanentJobError):
    """A job body or payload that cannot be understood."""


class UnknownJobType(PermanentJobError):
    """No handler is registered for this job type."""

    def __init__(self, job_type: str) -> None:
        super().__init__(f"no handler registered for job type {job_type!r}")
        self.job_type = job_type


class JobTooLarge(ValueError):
    """An encoded job over the 256 KiB limit; refused before it reaches any queue."""

    def __init__(self, job_id: str, size: int) -> None:
        super().__init__(f"job {job_id} encodes to {size} bytes, over the 262144-byte limit")
        self.job_id = job_id
        self.size = size


class OrderNotFound(LookupError):
    """No order with this id (for this user)."""

    def __init__(self, order_id: int) -> None:
        super().__init__(f"order {order_id} not found")
        self.order_id = order_id


class ProductNotFound(LookupError):
    """No product with this id."""

    def __init__(self, product_id: int) -> None:
        super().__init__(f"product {product_id} not found")
        self.product_id = product_id


class CartEmpty(Exception):
    """Checkout of an empty cart."""


class OutOfStock(Exception):
    """A cart line asks for more than the product's stock."""

    def __init__(self, product_id: int, requested: int, available: int) -> None:
        super().__init__(f"product {product_id}: requested {requested}, {available} in stock")
        self.product_id = product_id
        self.requested = requested
        self.available = available


class DuplicateIdempotencyKey(Exception):
    """Another transaction placed an order with this (user, idempotency key) first."""


class AlreadyNotified(Exception):
    """This notification was already recorded for this order."""


class PaymentNotFound(LookupError):
    """No payment event with this id (yet: the webhook may not have committed)."""


class PaymentAmountMismatch(PermanentJobError):
    """The paid amount differs from the order total; the order is not moved."""
