"""Response bodies, built from core's domain values."""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from skincare_core.shop.models import (
    CartLine,
    Order,
    OrderItem,
    OrderStatus,
    PaymentStatus,
    Product,
)


@frozen
class ProductView:
    """A product with price and stock."""

    id: int
    sku: str
    name: str
    price_rupiah: int
    stock: int

    @classmethod
    def of(cls, product: Product) -> ProductView:
        """From the domain value."""
        return cls(
            id=product.id,
            sku=product.sku,
            name=product.name,
            price_rupiah=product.price_rupiah,
            stock=product.stock,
        )


@frozen
class ProductList:
    """GET /v1/products."""

    products: list[ProductView]


@frozen
class LineView:
    """A cart or order line."""

    product_id: int
    name: str
    quantity: int
    unit_price_rupiah: int
    line_total_rupiah: int

    @classmethod
    def of_item(cls, item: OrderItem) -> LineView:
        """From an order item."""
        return cls(
            product_id=item.product_id,
            name=item.name,
            quantity=item.quantity,
            unit_price_rupiah=item.unit_price_rupiah,
            line_total_rupiah=item.line_total_rupiah,
        )

    @classmethod
    def of_cart_line(cls, line: CartLine) -> LineView:
        """From a cart line, priced at the product's current price."""
        product = line.product
        return cls(
            product_id=product.id,
            name=product.name,
            quantity=line.quantity,
            unit_price_rupiah=product.price_rupiah,
            line_total_rupiah=line.quantity * product.price_rupiah,
        )


@frozen
class CartView:
    """The signed-in user's cart."""

    items: list[LineView]
    total_rupiah: int

    @classmethod
    def of(cls, lines: list[CartLine]) -> CartView:
        """From the cart lines."""
        items = [LineView.of_cart_line(line) for line in lines]
        return cls(items=items, total_rupiah=sum(item.line_total_rupiah for item in items))


@frozen
class OrderPlaced:
    """POST /v1/orders: the order the idempotency key placed."""

    order_id: int
    order_number: str
    status: OrderStatus
    payment_status: PaymentStatus
    total_rupiah: int

    @classmethod
    def of(cls, order: Order) -> OrderPlaced:
        """From the domain order."""
        return cls(
            order_id=order.id,
            order_number=order.order_number,
            status=order.status,
            payment_status=order.payment_status,
            total_rupiah=order.total_rupiah,
        )


@frozen
class OrderView:
    """GET /v1/orders/{order_id}: the order with its items."""

    order_id: int
    order_number: str
    status: OrderStatus
    payment_status: PaymentStatus
    total_rupiah: int
    created_at: datetime
    items: list[LineView]

    @classmethod
    def of(cls, order: Order) -> OrderView:
        """From the domain order."""
        return cls(
            order_id=order.id,
            order_number=order.order_number,
            status=order.status,
            payment_status=order.payment_status,
            total_rupiah=order.total_rupiah,
            created_at=order.created_at,
            items=[LineView.of_item(item) for item in order.items],
        )


@frozen
class Received:
    """The webhook's answer: the event is stored (now or earlier)."""

    received: bool = True


@frozen
class Health:
    """Liveness / readiness answer."""

    status: str
