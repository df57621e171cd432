"""CheckoutService, PaymentWebhookService and ShopService on the in-memory database."""

from __future__ import annotations

import anyio
import attrs
import pytest

from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.errors import (
    CartEmpty,
    DuplicateIdempotencyKey,
    OrderNotFound,
    OutOfStock,
    ProductNotFound,
    UserNotFound,
)
from skincare_core.shop.job_types import (
    EXPIRE_UNPAID_ORDER,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
)
from skincare_core.shop.models import Order, OrderStatus, PaymentEvent, PaymentStatus, User
from skincare_core.shop.webhooks import InvalidPaymentEvent, PaymentWebhookService
from skincare_core.testing.shop import InMemoryDatabase, InMemoryUnitOfWork, memory_repos
from tests.core.core_kit import Shop

pytestmark = pytest.mark.anyio
JOBS_PER_ORDER = 2
"""The confirmation e-mail and the order's expiry."""


def checkout(shop: Shop) -> CheckoutService:
    return CheckoutService(uow=shop.db, clock=shop.clock)


def customer(shop: Shop, **cart: int) -> tuple[User, dict[str, int]]:
    """A user whose cart holds `quantity` of fresh products named by the keywords."""
    user = shop.db.add_user("buyer@example.com")
    ids = {}
    for name, quantity in cart.items():
        product = shop.db.add_product(name.upper(), name, 25_000, 5)
        shop.db.state.carts[(user.id, product.id)] = quantity
        ids[name] = product.id
    return user, ids


async def test_empty_cart_is_refused_and_nothing_written(shop: Shop) -> None:
    user, _ = customer(shop)
    with pytest.raises(CartEmpty):
        await checkout(shop).checkout(user.id, "k")
    assert (shop.db.state.orders, shop.queue.jobs()) == ({}, [])


async def test_out_of_stock_is_refused_and_nothing_written(shop: Shop) -> None:
    user, ids = customer(shop, toner=1, serum=6)
    with pytest.raises(OutOfStock) as raised:
        await checkout(shop).checkout(user.id, "k")
    assert (raised.value.product_id, raised.value.requested, raised.value.available) == (
        ids["serum"],
        6,
        5,
    )
    assert shop.db.state.orders == {}
    assert shop.db.state.products[ids["toner"]].stock == 5
    assert len(shop.db.state.carts) == 2
    assert shop.queue.jobs() == []


async def test_checkout_places_the_order_takes_stock_clears_cart_and_queues_its_jobs(
    shop: Shop,
) -> None:
    user, ids = customer(shop, toner=1, serum=3)
    order = await checkout(shop).checkout(user.id, "k")
    assert shop.db.state.orders[order.id] == order
    assert (order.user_id, order.status, order.payment_status) == (
        user.id,
        OrderStatus.PENDING,
        PaymentStatus.UNPAID,
    )
    assert order.total_rupiah == 4 * 25_000
    assert [(i.product_id, i.quantity) for i in order.items] == [
        (ids["toner"], 1),
        (ids["serum"], 3),
    ]
    assert order.order_number.startswith("SKN-20261201-")
    assert order.created_at == shop.clock.now()
    assert [shop.db.state.products[ids[n]].stock for n in ("toner", "serum")] == [4, 2]
    assert shop.db.state.carts == {}
    payload = {"order_id": order.id}
    confirmation, expiry = shop.queue.jobs()
    assert (confirmation.type, dict(confirmation.payload)) == (SEND_CONFIRMATION_EMAIL, payload)
    assert (expiry.type, dict(expiry.payload)) == (EXPIRE_UNPAID_ORDER, payload)
    # The confirmation is ready now; the expiry waits out the payment window.
    assert [m.job for m in await shop.queue.receive(10)] == [confirmation]


async def test_same_key_returns_the_same_order_without_a_second_job(shop: Shop) -> None:
    user, _ = customer(shop, toner=1)
    first = await checkout(shop).checkout(user.id, "k")
    assert await checkout(shop).checkout(user.id, "k") == first
    assert len(shop.queue.jobs()) == JOBS_PER_ORDER


async def test_same_key_with_a_different_cart_returns_the_first_order(shop: Shop) -> None:
    user, ids = customer(shop, toner=1)
    first = await checkout(shop).checkout(user.id, "k")
    shop.db.state.carts[(user.id, ids["toner"])] = 2
    assert await checkout(shop).checkout(user.id, "k") == first
    assert shop.db.state.products[ids["toner"]].stock == 4
    assert shop.db.state.carts == {(user.id, ids["toner"]): 2}
    assert len(shop.db.state.orders) == 1


async def test_another_key_places_another_order(shop: Shop) -> None:
    user, ids = customer(shop, toner=1)
    first = await checkout(shop).checkout(user.id, "k1")
    shop.db.state.carts[(user.id, ids["toner"])] = 1
    second = await checkout(shop).checkout(user.id, "k2")
    assert first.id != second.id
    assert len(shop.queue.jobs()) == 2 * JOBS_PER_ORDER


async def test_concurrent_checkouts_with_one_key_place_one_order(shop: Shop) -> None:
    user, ids = customer(shop, toner=2)
    orders: list[Order] = []

    async def place() -> None:
        orders.append(await checkout(shop).checkout(user.id, "k"))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(place)
    assert len({o.id for o in orders}) == 1
    assert len(orders) == 8
    assert shop.db.state.products[ids["toner"]].stock == 3
    assert len(shop.queue.jobs()) == JOBS_PER_ORDER


async def test_a_failed_write_rolls_everything_back(shop: Shop) -> None:
    user, ids = customer(shop, toner=1)
    shop.db.fail_next("orders.add", RuntimeError("connection lost"))
    with pytest.raises(RuntimeError):
        await checkout(shop).checkout(user.id, "k")
    assert shop.db.state.orders == {}
    assert shop.db.state.products[ids["toner"]].stock == 5
    assert shop.queue.jobs() == []


class RacedDatabase:
    """The second unit of work sees an order another request committed with the same key."""

    def __init__(self, db: InMemoryDatabase, order: Order, key: str) -> None:
        self._db, self._order, self._key, self.calls = db, order, key, 0

    def __call__(self) -> InMemoryUnitOfWork:
        self.calls += 1
        if self.calls == 2:
            self._db.state.orders[self._order.id] = self._order
            self._db.state.order_keys[(self._order.user_id, self._key)] = self._order.id
        return self._db()


async def test_duplicate_key_at_write_answers_with_the_committed_order(shop: Shop) -> None:
    user, _ = customer(shop, toner=1)
    other = await checkout(shop).checkout(user.id, "elsewhere")
    winner = attrs.evolve(other, id=999)
    shop.db.state.carts[(user.id, other.items[0].product_id)] = 1
    shop.db.fail_next("orders.add", DuplicateIdempotencyKey("k"))
    raced = RacedDatabase(shop.db, winner, "k")
    assert await CheckoutService(uow=raced, clock=shop.clock).checkout(user.id, "k") == winner
    assert raced.calls == 2
    assert len(shop.queue.jobs()) == JOBS_PER_ORDER


async def test_an_order_committed_while_waiting_for_the_cart_locks_is_returned(
    shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, ids = customer(shop, toner=1)
    winner = attrs.evolve(await checkout(shop).checkout(user.id, "first"), id=999)
    shop.db.state.carts[(user.id, ids["toner"])] = 1
    locked_lines = memory_repos.Carts.lines

    async def lines_then_race(self: memory_repos.Carts, user_id: int, **kw: bool) -> object:
        lines = await locked_lines(self, user_id, **kw)
        # Committed by another request: visible to this transaction and to any later one.
        for state in (self._s, shop.db.state):
            state.orders[winner.id] = winner
            state.order_keys[(user_id, "k")] = winner.id
        return lines

    monkeypatch.setattr(memory_repos.Carts, "lines", lines_then_race)
    assert await checkout(shop).checkout(user.id, "k") == winner
    assert shop.db.state.products[ids["toner"]].stock == 4
    assert len(shop.queue.jobs()) == JOBS_PER_ORDER


async def test_duplicate_key_without_an_order_is_raised(shop: Shop) -> None:
    user, _ = customer(shop, toner=1)
    shop.db.fail_next("orders.add", DuplicateIdempotencyKey("k"))
    with pytest.raises(DuplicateIdempotencyKey):
        await checkout(shop).checkout(user.id, "k")


async def test_a_new_payment_event_is_stored_with_one_job(shop: Shop) -> None:
    order = await shop.place_order()
    event = PaymentEvent("evt-1", order.id, "paid", order.total_rupiah)
    assert await PaymentWebhookService(uow=shop.db).receive(event) is True
    payment = shop.db.state.payments["evt-1"]
    assert (payment.order_id, payment.status, payment.amount_rupiah, payment.paid_at) == (
        order.id,
        PaymentStatus.PENDING,
        order.total_rupiah,
        None,
    )
    [job] = shop.queue.jobs()
    assert (job.type, dict(job.payload)) == (PROCESS_PAYMENT, {"event_id": "evt-1"})


async def test_a_duplicate_payment_event_adds_no_job(shop: Shop) -> None:
    order = await shop.place_order()
    service = PaymentWebhookService(uow=shop.db)
    assert await service.receive(PaymentEvent("evt-1", order.id, "paid", 1))
    assert await service.receive(PaymentEvent("evt-1", order.id, "paid", 1)) is False
    assert len(shop.queue.jobs()) == 1


async def test_a_payment_event_for_an_unknown_order_is_refused(shop: Shop) -> None:
    with pytest.raises(OrderNotFound) as raised:
        await PaymentWebhookService(uow=shop.db).receive(PaymentEvent("e", 404, "paid", 1))
    assert raised.value.order_id == 404
    assert shop.db.state.payments == {}


@pytest.mark.parametrize(
    "event",
    [
        PaymentEvent("e", 1, "paid", 0),
        PaymentEvent("e", 1, "paid", -5),
        PaymentEvent("e", 1, "failed", 100),
        PaymentEvent("", 1, "paid", 100),
    ],
)
async def test_an_invalid_payment_event_is_refused(shop: Shop, event: PaymentEvent) -> None:
    with pytest.raises(InvalidPaymentEvent):
        await PaymentWebhookService(uow=shop.db).receive(event)
    assert (shop.db.state.payments, shop.queue.jobs()) == ({}, [])


async def test_shop_lists_products_and_edits_the_cart(shop: Shop) -> None:
    service = ShopService(uow=shop.db)
    user = shop.db.add_user("a@example.com")
    b = shop.db.add_product("B", "Toner", 10, 1)
    a = shop.db.add_product("A", "Serum", 20, 2)
    assert await service.products() == [b, a]
    await service.set_cart_quantity(user.id, a.id, 2)
    await service.set_cart_quantity(user.id, b.id, 1)
    assert [(line.product, line.quantity) for line in await service.cart(user.id)] == [
        (b, 1),
        (a, 2),
    ]
    answered = await service.set_cart_quantity(user.id, b.id, 0)
    assert [line.product for line in await service.cart(user.id)] == [a]
    assert answered == await service.cart(user.id)


async def test_shop_refuses_unknown_products_and_negative_quantities(shop: Shop) -> None:
    service = ShopService(uow=shop.db)
    user = shop.db.add_user("a@example.com")
    with pytest.raises(ProductNotFound) as raised:
        await service.set_cart_quantity(user.id, 77, 1)
    assert raised.value.product_id == 77
    product = shop.db.add_product("A", "Serum", 20, 2)
    with pytest.raises(ValueError, match=">= 0"):
        await service.set_cart_quantity(user.id, product.id, -1)
    assert await service.cart(user.id) == []


async def test_shop_refuses_a_cart_for_a_user_that_does_not_exist(shop: Shop) -> None:
    service = ShopService(uow=shop.db)
    product = shop.db.add_product("A", "Serum", 20, 2)
    with pytest.raises(UserNotFound) as raised:
        await service.set_cart_quantity(404, product.id, 1)
    assert raised.value.user_id == 404
    assert await service.cart(404) == []


async def test_shop_shows_only_the_users_own_order(shop: Shop) -> None:
    order = await shop.place_order()
    service = ShopService(uow=shop.db)
    assert await service.order(order.user_id, order.id) == order
    stranger = shop.db.add_user("b@example.com")
    for user_id, order_id in ((stranger.id, order.id), (order.user_id, 999)):
        with pytest.raises(OrderNotFound):
            await service.order(user_id, order_id)
