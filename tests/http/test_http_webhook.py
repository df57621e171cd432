"""POST /v1/payments/webhook: signature before anything, one stored event, one queued job."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from skincare_core.jobs.job import JsonValue
from skincare_core.shop.job_types import PROCESS_PAYMENT
from skincare_core.shop.models import Order
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_core.testing.shop import ManualClock
from skincare_http import sign_webhook
from tests.http.http_support import WEBHOOK_SECRET, Backend, Seed, bearer, signed

pytestmark = pytest.mark.anyio
Client = AsyncTestClient[Litestar]
PROBLEMS = "https://skincare.example/problems"


@pytest.fixture
def backend(any_backend: Backend) -> Backend:
    """These tests hold on the in-memory kit and on the Postgres adapters alike."""
    return any_backend


WEBHOOK = "/v1/payments/webhook"


@pytest.fixture
async def order(client: Client, seed: Seed, uow_factory: UnitOfWorkFactory) -> Order:
    alice = bearer(seed.alice.id)
    await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 1}, headers=alice)
    placed = await client.post("/v1/orders", headers={**alice, "Idempotency-Key": "k"})
    async with uow_factory() as uow:
        found = await uow.orders.get(placed.json()["order_id"])
    assert found is not None
    return found


def _event(order: Order, **changes: Any) -> dict[str, Any]:
    event = {"event_id": "evt-1", "order_id": order.id, "status": "paid",
             "amount_rupiah": order.total_rupiah}  # fmt: skip
    return {**event, **changes}


def _now(clock: ManualClock) -> int:
    return int(clock.now().timestamp())


async def _payment_jobs(backend: Backend) -> list[dict[str, JsonValue]]:
    return [dict(job.payload) for job in await backend.jobs() if job.type == PROCESS_PAYMENT]


async def _stored(uow_factory: UnitOfWorkFactory, event_id: str = "evt-1") -> bool:
    async with uow_factory() as uow:
        return await uow.payments.get(event_id) is not None


async def test_a_signed_event_is_stored_and_queued(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory,
) -> None:  # fmt: skip
    body, headers = signed(_event(order), _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 200
    assert response.json() == {"received": True}
    assert await _stored(uow_factory)
    assert await _payment_jobs(backend) == [{"event_id": "evt-1"}]


async def test_the_same_event_again_is_200_and_queues_nothing_new(
    client: Client, order: Order, clock: ManualClock, backend: Backend
) -> None:
    body, headers = signed(_event(order), _now(clock))
    await client.post(WEBHOOK, content=body, headers=headers)
    clock.advance(timedelta(seconds=30))
    body, headers = signed(_event(order), _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 200
    assert response.json() == {"received": True}
    assert await _payment_jobs(backend) == [{"event_id": "evt-1"}]


def _unsigned(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k != "X-Signature"}


def _no_timestamp(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k != "X-Timestamp"}


def _wrong_secret(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    stamp = int(headers["X-Timestamp"])
    return {**headers, "X-Signature": sign_webhook("not-the-secret", stamp, body)}


def _bare_hex(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "X-Signature": headers["X-Signature"].removeprefix("sha256=")}


def _other_timestamp(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "X-Timestamp": str(int(headers["X-Timestamp"]) + 1)}


def _timestamp_not_a_number(body: bytes, headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "X-Timestamp": "soon"}


@pytest.mark.parametrize(
    "tamper",
    [_unsigned, _no_timestamp, _wrong_secret, _bare_hex, _other_timestamp,
     _timestamp_not_a_number],
)  # fmt: skip
async def test_bad_signatures_are_401_and_store_nothing(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory, tamper: Any,
) -> None:  # fmt: skip
    body, headers = signed(_event(order), _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=tamper(body, headers))

    assert response.status_code == 401
    assert response.json()["type"] == f"{PROBLEMS}/invalid-signature"
    assert "www-authenticate" not in response.headers
    assert not await _stored(uow_factory)
    assert await _payment_jobs(backend) == []


async def test_a_body_altered_after_signing_is_401(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory,
) -> None:  # fmt: skip
    _, headers = signed(_event(order), _now(clock))
    forged, _ = signed(_event(order, amount_rupiah=1), _now(clock))

    response = await client.post(WEBHOOK, content=forged, headers=headers)

    assert response.status_code == 401
    assert not await _stored(uow_factory)
    assert await _payment_jobs(backend) == []


@pytest.mark.parametrize(
    "offset", [timedelta(minutes=-5, seconds=-1), timedelta(minutes=5, seconds=1)]
)
async def test_a_timestamp_outside_five_minutes_is_401(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory, offset: timedelta,
) -> None:  # fmt: skip
    body, headers = signed(_event(order), int((clock.now() + offset).timestamp()))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 401
    assert not await _stored(uow_factory)
    assert await _payment_jobs(backend) == []


async def test_a_replay_after_the_window_is_401(
    client: Client, order: Order, clock: ManualClock, backend: Backend
) -> None:
    body, headers = signed(_event(order), _now(clock))
    assert (await client.post(WEBHOOK, content=body, headers=headers)).status_code == 200
    clock.advance(timedelta(minutes=6))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 401
    assert len(await _payment_jobs(backend)) == 1


async def test_a_timestamp_inside_the_window_is_accepted(
    client: Client, order: Order, clock: ManualClock
) -> None:
    body, headers = signed(_event(order), int((clock.now() - timedelta(minutes=4)).timestamp()))

    assert (await client.post(WEBHOOK, content=body, headers=headers)).status_code == 200


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"amount_rupiah": 0}, "amount_rupiah"),
        ({"amount_rupiah": -150_000}, "amount_rupiah"),
        ({"amount_rupiah": [150_000]}, "amount_rupiah"),
        ({"status": "refunded"}, "status"),
        ({"event_id": ""}, "event_id"),
        ({"event_id": "evt\u0000-1"}, "event_id"),
        ({"event_id": "evt\u001f-1"}, "event_id"),
        ({"amount_rupiah": "150000"}, "amount_rupiah"),
        ({"amount_rupiah": 150_000.0}, "amount_rupiah"),
        ({"order_id": 1.0}, "order_id"),
        ({"order_id": "one"}, "order_id"),
    ],
)
async def test_invalid_events_are_400_naming_the_field(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory, changes: dict[str, Any], field: str,
) -> None:  # fmt: skip
    body, headers = signed(_event(order, **changes), _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 400
    problem = response.json()
    assert problem["type"] == f"{PROBLEMS}/invalid-request"
    assert [e["field"] for e in problem["errors"]] == [field]
    assert await _payment_jobs(backend) == []


async def test_a_missing_field_is_named(client: Client, order: Order, clock: ManualClock) -> None:
    event = _event(order)
    del event["amount_rupiah"]
    body, headers = signed(event, _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "amount_rupiah"


async def test_signed_malformed_json_is_400(
    client: Client, order: Order, clock: ManualClock
) -> None:
    body = b'{"event_id": "evt-1",'
    stamp = _now(clock)
    headers = {"X-Timestamp": str(stamp), "X-Signature": sign_webhook(WEBHOOK_SECRET, stamp, body)}

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 400


async def test_an_event_for_an_unknown_order_is_404(
    client: Client, order: Order, clock: ManualClock, backend: Backend,
    uow_factory: UnitOfWorkFactory,
) -> None:  # fmt: skip
    body, headers = signed(_event(order, order_id=order.id + 1000), _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 404
    assert response.json()["type"] == f"{PROBLEMS}/order-not-found"
    assert not await _stored(uow_factory)
    assert await _payment_jobs(backend) == []


async def test_an_oversized_webhook_is_413(client: Client, clock: ManualClock) -> None:
    body, headers = signed({"pad": "x" * (64 * 1024)}, _now(clock))

    response = await client.post(WEBHOOK, content=body, headers=headers)

    assert response.status_code == 413
