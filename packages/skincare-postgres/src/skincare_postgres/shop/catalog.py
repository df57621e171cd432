"""Users, products and carts on one connection of a unit of work."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.rows import class_row, kwargs_row

from skincare_core.shop.models import CartLine, OrderItem, Product, User
from skincare_postgres.driver import Driver

_PRODUCT_COLUMNS = "products.id, products.sku, products.name, products.price_rupiah, products.stock"
_USER = "SELECT id, email, language FROM users WHERE id = %(user_id)s"
_PRODUCTS = f"SELECT {_PRODUCT_COLUMNS} FROM products ORDER BY id"
_PRODUCT = f"SELECT {_PRODUCT_COLUMNS} FROM products WHERE id = %(product_id)s"
_LINES = (
    f"SELECT {_PRODUCT_COLUMNS}, cart_items.quantity FROM cart_items"
    " JOIN products ON products.id = cart_items.product_id"
    " WHERE cart_items.user_id = %(user_id)s ORDER BY products.id"
)
# Locks are taken in id order, so concurrent checkouts cannot deadlock.
_LINES_LOCKED = f"{_LINES} FOR UPDATE OF products"
_SET_QUANTITY = (
    "INSERT INTO cart_items (user_id, product_id, quantity)"
    " VALUES (%(user_id)s, %(product_id)s, %(quantity)s)"
    " ON CONFLICT (user_id, product_id) DO UPDATE SET quantity = excluded.quantity"
)
_REMOVE_LINE = "DELETE FROM cart_items WHERE user_id = %(user_id)s AND product_id = %(product_id)s"
# Stock and cart in one round trip; CHECK (stock >= 0) backs up the caller's check.
_CHECK_OUT = (
    "WITH taken AS (UPDATE products SET stock = products.stock - line.quantity"
    " FROM unnest(CAST(%(product_ids)s AS bigint[]), CAST(%(quantities)s AS integer[]))"
    " AS line(product_id, quantity) WHERE products.id = line.product_id RETURNING 1)"
    " DELETE FROM cart_items WHERE user_id = %(user_id)s"
)
_PUT_BACK = (
    "UPDATE products SET stock = products.stock + line.quantity"
    " FROM unnest(CAST(%(product_ids)s AS bigint[]), CAST(%(quantities)s AS integer[]))"
    " AS line(product_id, quantity) WHERE products.id = line.product_id"
)
_USER_ROW = class_row(User)
_PRODUCT_ROW = class_row(Product)


def _cart_line(
    *, id: int, sku: str, name: str, price_rupiah: int, stock: int, quantity: int
) -> CartLine:
    product = Product(id=id, sku=sku, name=name, price_rupiah=price_rupiah, stock=stock)
    return CartLine(product=product, quantity=quantity)


_CART_LINE_ROW = kwargs_row(_cart_line)


class PostgresUsers:
    """Customers."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def get(self, user_id: int) -> User | None:
        """The user, or None."""
        found = await self._driver.rows(_USER, {"user_id": user_id}, _USER_ROW)
        return found[0] if found else None


class PostgresProducts:
    """The catalogue and its stock (CHECK stock >= 0 backs up the caller's check)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def list(self) -> list[Product]:
        """Every product, by id."""
        return await self._driver.rows(_PRODUCTS, {}, _PRODUCT_ROW)

    async def get(self, product_id: int) -> Product | None:
        """One product, or None."""
        found = await self._driver.rows(_PRODUCT, {"product_id": product_id}, _PRODUCT_ROW)
        return found[0] if found else None

    async def put_back(self, items: Sequence[OrderItem]) -> None:
        """Return the items' quantities to stock, in one statement."""
        params = {
            "product_ids": [item.product_id for item in items],
            "quantities": [item.quantity for item in items],
        }
        await self._driver.run(_PUT_BACK, params)


class PostgresCarts:
    """Users' carts, one row per (user, product)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def lines(self, user_id: int, *, lock_products: bool = False) -> list[CartLine]:
        """The cart by product id; `lock_products` locks the product rows FOR UPDATE in id order."""
        query = _LINES_LOCKED if lock_products else _LINES
        return await self._driver.rows(query, {"user_id": user_id}, _CART_LINE_ROW)

    async def set_quantity(self, user_id: int, product_id: int, quantity: int) -> None:
        """Set a line's quantity; 0 removes it."""
        params = {"user_id": user_id, "product_id": product_id, "quantity": quantity}
        await self._driver.run(_REMOVE_LINE if quantity == 0 else _SET_QUANTITY, params)

    async def check_out(self, user_id: int, lines: Sequence[CartLine]) -> None:
        """Take the lines' quantities out of stock and empty the cart, in one statement."""
        params = {
            "user_id": user_id,
            "product_ids": [line.product.id for line in lines],
            "quantities": [line.quantity for line in lines],
        }
        await self._driver.run(_CHECK_OUT, params)
