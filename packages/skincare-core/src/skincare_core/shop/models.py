"""Domain values of the shop, frozen attrs classes. Money is an integer number of rupiah."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from attrs import frozen


class OrderStatus(StrEnum):
    """Where an order is in its life: payments drive `pending -> paid`; an order still unpaid
    when the payment window closes goes `pending -> expired` and its stock goes back."""

    PENDING = "pending"
    PAID = "paid"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class PaymentStatus(StrEnum):
    """Whether money arrived for an order or a payment event."""

    UNPAID = "unpaid"
    PENDING = "pending"
    PAID = "paid"


class NotificationType(StrEnum):
    """The e-mails an order can get, each at most once (UNIQUE order_id + type)."""

    ORDER_CONFIRMATION = "order_confirmation"
    PAYMENT_RECEIVED = "payment_received"


@frozen
class User:
    """A shop customer."""

    id: int
    email: str
    language: str = "id"


@frozen
class Product:
    """A product with its current price and stock."""

    id: int
    sku: str
    name: str
    price_rupiah: int
    stock: int


@frozen
class CartLine:
    """One product in a user's cart, with the product's current values."""

    product: Product
    quantity: int


@frozen
class OrderItem:
    """A line of a placed order; price is fixed at checkout."""

    product_id: int
    name: str
    quantity: int
    unit_price_rupiah: int

    @property
    def line_total_rupiah(self) -> int:
        """Quantity times unit price."""
        return self.quantity * self.unit_price_rupiah


@frozen
class NewOrder:
    """An order about to be written at checkout."""

    user_id: int
    idempotency_key: str
    order_number: str
    items: tuple[OrderItem, ...]
    created_at: datetime

    @property
    def total_rupiah(self) -> int:
        """Sum of line totals."""
        return sum(item.line_total_rupiah for item in self.items)


@frozen
class Order:
    """A placed order."""

    id: int
    order_number: str
    user_id: int
    status: OrderStatus
    payment_status: PaymentStatus
    total_rupiah: int
    items: tuple[OrderItem, ...]
    created_at: datetime


@frozen
class PaymentEvent:
    """A payment gateway's webhook event, as received."""

    event_id: str
    order_id: int
    status: str
    amount_rupiah: int


@frozen
class Payment:
    """A stored payment event and whether it has been applied to its order."""

    event_id: str
    order_id: int
    status: PaymentStatus
    amount_rupiah: int
    paid_at: datetime | None


@frozen
class InvoiceRecord:
    """An invoice PDF stored for an order."""

    order_id: int
    storage_key: str
    created_at: datetime


@frozen
class SendClaim:
    """One run's claim on sending a notification: its random `token`, held until `until`.

    The claim is the lease that keeps concurrent deliveries of one job from sending twice; a
    holder that dies leaves it to expire, so the next delivery sends again after `until`.
    """

    token: str
    until: datetime


@frozen
class ProductSales:
    """How much of one product a day's sales held (name as on the latest order of it)."""

    product_id: int
    name: str
    quantity: int
    revenue_rupiah: int


@frozen
class DailySales:
    """A day's sales: how many orders were paid, their revenue, and the best-selling products
    by quantity (most first; ties by product id)."""

    day: date
    orders: int
    revenue_rupiah: int
    top_products: tuple[ProductSales, ...]
