"""Enqueueing is checked once, in core: a bad enqueue fails the same way through `enqueue` and
through a unit of work's outbox, before any queue or writer sees it; an `Envelope` exists only
for a valid job, schedule, key and queue name."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.codec import MAX_JOB_BYTES, decode_job
from skincare_core.jobs.envelope import Envelope, RoutedOutbox, due_at, enqueue
from skincare_core.jobs.errors import JobTooLarge
from skincare_core.jobs.job import new_job
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.testing.jobs import InMemoryQueue

pytestmark = pytest.mark.anyio
NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
LATER = NOW + timedelta(minutes=5)
HUGE = "x" * (MAX_JOB_BYTES + 1)
BAD = [
    pytest.param({"delay": timedelta(1), "not_before": LATER}, ValueError, "not both", id="both"),
    pytest.param({"delay": timedelta(seconds=-1)}, ValueError, "negative", id="negative-delay"),
    pytest.param({"not_before": datetime(2026, 12, 1)}, ValueError, "timezone", id="naive-time"),
    pytest.param({"unique_key": ""}, ValueError, "non-empty", id="empty-key"),
    pytest.param({"payload": HUGE}, JobTooLarge, "over the", id="too-large"),
    pytest.param({"priority": 0}, ValueError, "invalid priority", id="priority-0"),
    pytest.param({"priority": 5}, ValueError, "invalid priority", id="priority-5"),
]


class RecordingQueue(InMemoryQueue):
    """An in-memory queue that keeps every envelope it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[Envelope] = []

    async def enqueue(self, envelope: Envelope) -> bool:
        self.given.append(envelope)
        return await super().enqueue(envelope)


class RecordingWriter:
    """An outbox writer that keeps every envelope it was given."""

    def __init__(self) -> None:
        self.given: list[Envelope] = []

    async def write(self, envelope: Envelope) -> bool:
        self.given.append(envelope)
        return True


def _split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    payload = {"blob": options["payload"]} if "payload" in options else {}
    return payload, {k: v for k, v in options.items() if k != "payload"}


@pytest.mark.parametrize(("options", "error", "match"), BAD)
async def test_a_bad_enqueue_fails_before_the_queue_is_called(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    queue = RecordingQueue()
    payload, schedule = _split(options)
    with pytest.raises(error, match=match):
        await enqueue(queue, new_job("t", **payload), **schedule)
    assert (queue.given, queue.depth) == ([], 0)


@pytest.mark.parametrize(("options", "error", "match"), BAD)
async def test_a_bad_outbox_add_fails_the_same_way_before_the_writer_is_called(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    writer = RecordingWriter()
    payload, schedule = _split(options)
    with pytest.raises(error, match=match):
        await RoutedOutbox(writer, QueueRoutes()).add(new_job("t", **payload), **schedule)
    assert writer.given == []


async def test_a_queue_with_a_bad_name_is_refused_before_it_is_called() -> None:
    queue = RecordingQueue()
    queue.name = "Not A Queue"
    with pytest.raises(ValueError, match="invalid queue name"):
        await enqueue(queue, new_job("t"))
    assert (queue.given, queue.depth) == ([], 0)


async def test_a_good_enqueue_hands_the_queue_one_envelope_encoded_once() -> None:
    queue, job = RecordingQueue(), new_job("t", order_id="7")
    assert await enqueue(queue, job, delay=timedelta(seconds=5), unique_key="k")
    [envelope] = queue.given
    assert (envelope.job, envelope.queue, envelope.unique_key) == (job, "default", "k")
    assert (envelope.delay, decode_job(envelope.body)) == (timedelta(seconds=5), job)


QUEUE_NAMES = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_-]{0,39}", fullmatch=True), st.text(max_size=45)
)
DELAYS = st.none() | st.timedeltas(min_value=timedelta(days=-2), max_value=timedelta(days=400))
TIMES = st.none() | st.datetimes(timezones=st.none() | st.just(UTC))
KEYS = st.none() | st.text(max_size=5)


def _valid(queue: str, delay: timedelta | None, at: datetime | None, key: str | None) -> bool:
    """The rule written out independently of `Envelope`."""
    name_ok = re.fullmatch(r"[a-z][a-z0-9_-]{0,39}", queue) is not None
    schedule_ok = delay is None or at is None
    delay_ok = delay is None or delay >= timedelta(0)
    time_ok = at is None or at.tzinfo is not None
    return name_ok and schedule_ok and delay_ok and time_ok and key != ""


@given(QUEUE_NAMES, DELAYS, TIMES, KEYS)
def test_an_envelope_exists_exactly_for_a_valid_enqueue(
    queue: str, delay: timedelta | None, at: datetime | None, key: str | None
) -> None:
    job = new_job("t")
    if not _valid(queue, delay, at, key):
        with pytest.raises(ValueError):
            Envelope(job, queue, at, key, delay=delay)
        return
    envelope = Envelope(job, queue, at, key, delay=delay)
    assert (envelope.queue, envelope.unique_key, decode_job(envelope.body)) == (queue, key, job)
    expected = NOW + delay if delay is not None else at
    assert due_at(envelope, NOW) == expected
