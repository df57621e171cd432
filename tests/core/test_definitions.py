"""Typed job definitions: arguments round-trip through the wire, bad ones name their field
before any I/O, and payloads that do not fit are InvalidJob naming the field."""

from __future__ import annotations

import enum
import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from uuid import UUID

import anyio
import pytest
from attrs import evolve, fields, frozen
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs import (
    Definitions,
    Envelope,
    InvalidJob,
    Job,
    JobDefinition,
    PermanentJobError,
    QueueRoutes,
    RetryPolicy,
    RoutedOutbox,
    decode_job,
    enqueue,
    legacy_digits,
)
from skincare_core.testing.jobs import InMemoryQueue

pytestmark = pytest.mark.anyio


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


@frozen
class Address:
    city: str
    postcode: int | None = None


@frozen
class Everything:
    count: int
    name: str
    flag: bool
    amount: Decimal
    day: date
    at: datetime
    ref: UUID
    colour: Colour
    size: Size
    tags: tuple[str, ...]
    pair: tuple[int, str]
    address: Address


@frozen
class OrderArgs:
    order_id: int


async def _nothing(_: Everything) -> None:
    return None


async def _no_order(_: OrderArgs) -> None:
    return None


EVERYTHING = JobDefinition("everything", Everything, _nothing)
ORDER = JobDefinition("order", OrderArgs, _no_order, queue="critical")

text = st.text(st.characters(codec="utf-8"), max_size=12)
aware = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
) | st.datetimes(timezones=st.just(timezone(timedelta(hours=7))), min_value=datetime(2, 1, 1))
everything = st.builds(
    Everything,
    count=st.integers(),
    name=text,
    flag=st.booleans(),
    amount=st.decimals(allow_nan=False, allow_infinity=False),
    day=st.dates(),
    at=aware,
    ref=st.uuids(),
    colour=st.sampled_from(Colour),
    size=st.sampled_from(Size),
    tags=st.lists(text, max_size=3).map(tuple),
    pair=st.tuples(st.integers(), text),
    address=st.builds(Address, text, st.none() | st.integers()),
)


@given(everything)
def test_every_supported_type_round_trips_through_the_wire(args: Everything) -> None:
    envelope = EVERYTHING.job(args)
    received = decode_job(envelope.body)
    assert received.type == "everything"
    assert EVERYTHING.arguments(received) == args
    # The payload is plain JSON: what a third party would send decodes the same.
    assert EVERYTHING.arguments(decode_job(json.dumps(json.loads(envelope.body)))) == args


_WRONG: list[tuple[str, object]] = [
    ("count", True),
    ("count", "1"),
    ("count", 1.0),
    ("flag", 1),
    ("name", 5),
    ("amount", 1.5),
    ("amount", "NaN"),
    ("amount", "lots"),
    ("day", "2024-01-02T00:00:00"),
    ("at", "2024-01-02T00:00:00"),
    ("at", "yesterday"),
    ("ref", "not-a-uuid"),
    ("colour", "green"),
    ("size", 3),
    ("tags", "ab"),
    ("pair", [1]),
    ("address", "Jakarta"),
]


@given(everything, st.sampled_from(_WRONG))
def test_a_payload_that_does_not_fit_is_invalid_naming_the_field(
    args: Everything, wrong: tuple[str, object]
) -> None:
    field, value = wrong
    payload = {**json.loads(EVERYTHING.job(args).body)["payload"], field: value}
    with pytest.raises(InvalidJob, match=f"{field}: ") as raised:
        EVERYTHING.arguments(Job("1", "everything", payload))
    assert isinstance(raised.value, PermanentJobError)


@given(everything, st.sampled_from(["count", "address", "tags"]))
def test_a_missing_field_is_named(args: Everything, field: str) -> None:
    payload = dict(json.loads(EVERYTHING.job(args).body)["payload"])
    del payload[field]
    with pytest.raises(InvalidJob, match=f"{field}: required field missing"):
        EVERYTHING.arguments(Job("1", "everything", payload))


@given(everything, text.filter(lambda k: k not in Everything.__attrs_attrs__.__dict__))
def test_an_extra_field_is_named(args: Everything, extra: str) -> None:
    payload = {**json.loads(EVERYTHING.job(args).body)["payload"], f"x{extra}": 1}
    with pytest.raises(InvalidJob, match=r"extra fields found \(x"):
        EVERYTHING.arguments(Job("1", "everything", payload))


def test_a_nested_field_is_named_by_its_path() -> None:
    payload = json.loads(EVERYTHING.job(_sample()).body)["payload"]
    payload["address"] = {"city": 7}
    with pytest.raises(InvalidJob, match=r"address\.city: expected a string, got int"):
        EVERYTHING.arguments(Job("1", "everything", payload))


def _sample() -> Everything:
    return Everything(
        1,
        "n",
        True,
        Decimal("1.50"),
        date(2026, 1, 2),
        datetime(2026, 1, 2, tzinfo=UTC),
        UUID(int=7),
        Colour.RED,
        Size.LARGE,
        ("a",),
        (1, "b"),
        Address("Jakarta"),
    )


def _changed(**change: object) -> Everything:
    # Built outside mypy's sight: each is a mistake its types would (or could not) catch.
    values = {**{a.name: getattr(_sample(), a.name) for a in fields(Everything)}, **change}
    return Everything(**values)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"at": datetime(2026, 1, 2)}, "at"),
        ({"count": True}, "count"),
        ({"day": datetime(2026, 1, 2, tzinfo=UTC)}, "day"),
        ({"amount": Decimal("Infinity")}, "amount"),
        ({"address": Address("J", postcode=False)}, r"address\.postcode"),
        ({"pair": (1, 2)}, "pair"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_arguments_types_cannot_check_are_a_value_error_naming_the_field(
    change: dict[str, object], field: str
) -> None:
    with pytest.raises(ValueError, match=f"'everything': {field}: "):
        EVERYTHING.job(_changed(**change))


def test_arguments_of_another_class_are_refused() -> None:
    with pytest.raises(ValueError, match="expected arguments of class OrderArgs"):
        ORDER.job(_sample())  # type: ignore[arg-type] # the mistake mypy reports


def test_a_job_goes_to_its_definitions_queue_with_its_options() -> None:
    keyed = JobDefinition(
        "keyed", OrderArgs, _no_order, unique=lambda a: f"order:{a.order_id}", queue="bulk"
    )
    envelope = keyed.job(OrderArgs(7), delay=timedelta(seconds=3), headers={"h": "v"})
    assert (envelope.queue, envelope.unique_key, envelope.delay) == (
        "bulk",
        "order:7",
        timedelta(seconds=3),
    )
    assert envelope.job.payload == {"order_id": 7}
    assert envelope.job.headers == {"h": "v"}
    assert keyed.job(OrderArgs(7), unique_key="mine").unique_key == "mine"


def test_a_definition_refuses_a_bad_name_queue_class_or_timeout() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        JobDefinition("", OrderArgs, _no_order)
    with pytest.raises(ValueError, match="invalid queue name"):
        JobDefinition("o", OrderArgs, _no_order, queue="Bad Queue")
    with pytest.raises(TypeError, match="attrs class"):
        JobDefinition("o", dict, _no_order)  # type: ignore[arg-type] # not an attrs class
    with pytest.raises(ValueError, match="positive"):
        JobDefinition("o", OrderArgs, _no_order, timeout=timedelta(0))


def test_definitions_give_the_worker_every_option() -> None:
    policy = RetryPolicy(attempts=2, base=timedelta(seconds=1), cap=timedelta(seconds=1))
    slow = JobDefinition("slow", OrderArgs, _no_order, retry=policy, timeout=timedelta(hours=1))
    definitions = Definitions(ORDER, slow, EVERYTHING)
    assert definitions.names == {"order", "slow", "everything"}
    assert definitions.routes == QueueRoutes(
        {"order": "critical", "slow": "default"} | {"everything": "default"}
    )
    assert definitions.queues == ("critical", "default")
    assert definitions.retry_policies == {"slow": policy}
    assert definitions.timeouts == {"slow": timedelta(hours=1)}
    assert definitions.router().job_types == {"order", "slow", "everything"}
    with pytest.raises(ValueError, match="'order' is defined twice"):
        Definitions(ORDER, slow) + Definitions(ORDER)


async def test_a_typed_job_is_enqueued_on_its_queue_and_refuses_another() -> None:
    critical = InMemoryQueue(name="critical")
    assert await enqueue(critical, ORDER.job(OrderArgs(5)))
    [message] = await critical.receive(1)
    assert ORDER.arguments(message.job) == OrderArgs(5)
    with pytest.raises(ValueError, match="goes to queue 'critical', not 'default'"):
        await enqueue(InMemoryQueue(), ORDER.job(OrderArgs(5)))
    with pytest.raises(ValueError, match=r"give them to \.job"):
        await enqueue(critical, ORDER.job(OrderArgs(5)), delay=timedelta(1))


async def test_an_outbox_writes_a_typed_job_to_its_own_queue_with_the_trace_headers() -> None:
    written: list[Envelope] = []

    class Writer:
        async def write(self, envelope: Envelope) -> bool:
            written.append(envelope)
            return True

    outbox = RoutedOutbox(Writer(), QueueRoutes(), lambda: {"traceparent": "t"})
    await outbox.add(ORDER.job(OrderArgs(9), unique_key="k"))
    [envelope] = written
    assert (envelope.queue, envelope.unique_key) == ("critical", "k")
    assert decode_job(envelope.body).headers == {"traceparent": "t"}


@given(st.integers(min_value=0, max_value=10**30))
def test_legacy_digit_strings_upgrade_to_the_integer(order_id: int) -> None:
    legacy = evolve(ORDER, upgrade=legacy_digits("order_id"))
    assert legacy.arguments(Job("1", "order", {"order_id": str(order_id)})) == OrderArgs(order_id)
    assert legacy.arguments(Job("1", "order", {"order_id": order_id})) == OrderArgs(order_id)


@pytest.mark.parametrize("raw", ["4x", "", "²", "١٢", "-1", " 1"])
def test_legacy_upgrade_leaves_anything_but_digits_to_be_refused(raw: str) -> None:
    legacy = evolve(ORDER, upgrade=legacy_digits("order_id"))
    with pytest.raises(InvalidJob, match="order_id: expected an integer, got str"):
        legacy.arguments(Job("1", "order", {"order_id": raw}))
    # Without the upgrade even digits are refused: the legacy form is the shop's choice.
    with pytest.raises(InvalidJob, match="order_id: "):
        ORDER.arguments(Job("1", "order", {"order_id": "42"}))


async def test_a_handler_object_with_an_async_call_is_async() -> None:
    class Handler:
        async def __call__(self, args: OrderArgs) -> None:
            return None

    def blocking(args: OrderArgs) -> None:
        return None

    assert JobDefinition("a", OrderArgs, Handler()).is_async
    assert not JobDefinition("s", OrderArgs, blocking).is_async
    ran: list[OrderArgs] = []
    sync = JobDefinition("s", OrderArgs, ran.append)
    await sync.runner(anyio.CapacityLimiter(1))(sync.job(OrderArgs(3)).job)
    assert ran == [OrderArgs(3)]
