"""A bounded shop load over HTTP against the real API: customers in threads, each placing
orders one after another (cart, checkout, a paid webhook delivered twice) until told to stop.

A 503 is retried at once with the same Idempotency-Key or event id, as a client that reads
Retry-After would retry later; every answer is kept with when it came, for the invariants.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial

import httpx
from attrs import define, field

from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import ShopClient
from tests.faults.shop_invariants import Answer, PlacedOrder

RETRY_PAUSE = 0.05
"""Seconds between a 503 and its retry: short, so that recovery is measured to the tenth."""
REQUEST_DEADLINE = 20.0
"""No request is retried past this: a customer stuck that long fails the test."""


@define
class ShopLoad:
    """`customers` placing `orders_each` orders each through `client` (fewer once `stop`)."""

    client: ShopClient
    shop: SeededShop
    orders_each: int
    customers: int
    pause: float = 0.2
    """Seconds each customer waits between orders, so the load spans the fault."""
    answers: list[Answer] = field(factory=list)
    placed: list[PlacedOrder] = field(factory=list)
    stop: threading.Event = field(factory=threading.Event)
    _lock: threading.Lock = field(factory=threading.Lock)

    def first_success_after(self, moment: float, what: str = "checkout") -> float:
        """Seconds from `moment` to the first `what` sent after it that succeeded."""
        ok = [a.answered for a in self.answers if a.what == what and a.sent >= moment and a.ok]
        return min(ok) - moment

    def statuses(self) -> set[int]:
        """Every status answered."""
        return {a.status for a in self.answers}

    def customer(self, index: int) -> None:
        """One customer's orders, one after another, until stopped."""
        user_id = self.shop.user_ids[index]
        for n in range(self.orders_each):
            if self.stop.is_set():
                return
            self._order(user_id, self.shop.product_ids[n % len(self.shop.product_ids)], n)
            time.sleep(self.pause)

    def _order(self, user_id: int, product_id: int, n: int) -> None:
        key = f"u{user_id}-o{n}"
        self._until_ok("cart", partial(self._put_cart, user_id, product_id))
        order = dict(self._until_ok("checkout", partial(self._post_order, user_id, key)).json())
        for _ in range(2):  # the gateway delivers the event twice
            self._until_ok("webhook", partial(self._pay, order))
        with self._lock:
            self.placed.append(PlacedOrder(user_id, key, int(str(order["order_id"]))))

    def _put_cart(self, user_id: int, product_id: int) -> httpx.Response:
        auth = self.client.auth_headers(user_id)
        url = f"/v1/cart/items/{product_id}"
        return self.client.http.put(url, json={"quantity": 1}, headers=auth)

    def _post_order(self, user_id: int, key: str) -> httpx.Response:
        headers = {**self.client.auth_headers(user_id), "Idempotency-Key": key}
        return self.client.http.post("/v1/orders", headers=headers)

    def _pay(self, order: dict[str, object]) -> httpx.Response:
        return self.client.pay_response(order, f"evt-{order['order_id']}")

    def _until_ok(self, what: str, send: Callable[[], httpx.Response]) -> httpx.Response:
        """`send()` again after each 503 until a 2xx; AssertionError on any other answer."""
        deadline = time.monotonic() + REQUEST_DEADLINE
        while True:
            sent = time.monotonic()
            response = send()
            retry_after = response.headers.get("Retry-After")
            answer = Answer(what, sent, time.monotonic(), response.status_code, retry_after)
            with self._lock:
                self.answers.append(answer)
            if answer.ok:
                return response
            assert response.status_code == 503, f"{what}: {response.status_code} {response.text}"
            assert time.monotonic() < deadline, f"{what}: 503 for {REQUEST_DEADLINE} s"
            time.sleep(RETRY_PAUSE)


@contextmanager
def running(load: ShopLoad) -> Iterator[ShopLoad]:
    """The load's customers in threads; on exit, wait for them to finish (stop them first when
    the block failed); a customer's failure is raised."""
    pool = ThreadPoolExecutor(max_workers=load.customers)
    futures = [pool.submit(load.customer, i) for i in range(load.customers)]
    try:
        yield load
    except BaseException:
        load.stop.set()
        raise
    finally:
        pool.shutdown(wait=True)
    for future in futures:
        future.result()
