"""The shop's domain errors, named for what happened; adapters translate them at the edge."""

from __future__ import annotations

from skincare_core.jobs.errors import PermanentJobError


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


class UserNotFound(LookupError):
    """No user with this id: a signed-in request names someone who does not exist."""

    def __init__(self, user_id: int) -> None:
        super().__init__(f"user {user_id} not found")
        self.user_id = user_id


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


class PaymentForExpiredOrder(PermanentJobError):
    """Money arrived for an order that expired unpaid (its stock went back): the payment stays
    stored and unapplied, and its job goes to the dead letters for an operator to refund the
    payment or reinstate the order."""
