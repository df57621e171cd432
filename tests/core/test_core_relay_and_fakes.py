"""The outbox relay over an in-test storage, the clocks, and the recording e-mail fake."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.shop.ports import OrderEmail
from skincare_core.shop.system_clock import SystemClock
from skincare_core.testing.jobs import InMemoryQueue
from skincare_core.testing.shop import ManualClock, RecordingEmailService
from tests.log_records import fields

pytestmark = pytest.mark.anyio
FAST = {"idle_wait": timedelta(milliseconds=5), "error_wait": timedelta(milliseconds=5)}


class ListOutbox:
    """OutboxStorage over a list: claim takes the oldest unsent rows, mark_sent deletes them."""

    def __init__(self, jobs: Sequence[Job], *, claim_failures: int = 0) -> None:
        self.rows = {str(n): Envelope(job) for n, job in enumerate(jobs)}
        self.claim_failures = claim_failures
        self.drained = anyio.Event()
        self.released: list[str] = []

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        if self.claim_failures:
            self.claim_failures -= 1
            raise ConnectionError("database unreachable")
        return list(self.rows.items())[:limit]

    async def mark_sent(self, handles: Sequence[str]) -> None:
        for handle in handles:
            del self.rows[handle]
        if not self.rows:
            self.drained.set()

    async def release(self, handles: Sequence[str]) -> None:
        self.released += handles


class BrokenSink:
    """A queue that is down."""

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        raise ConnectionError("queue unreachable")


async def test_relay_once_forwards_a_batch_and_marks_it_sent() -> None:
    jobs = [new_job("t", n=str(n)) for n in range(3)]
    storage, queue = ListOutbox(jobs), InMemoryQueue()
    relay = OutboxRelay(storage=storage, sink=queue, batch_size=2)
    assert await relay.relay_once() == 2
    assert queue.jobs() == jobs[:2]
    assert [e.job for e in storage.rows.values()] == jobs[2:]
    assert await relay.relay_once() == 1
    assert await relay.relay_once() == 0
    assert queue.jobs() == jobs


async def test_relay_once_leaves_jobs_unmarked_when_the_sink_fails() -> None:
    storage = ListOutbox([new_job("t")])
    with pytest.raises(ConnectionError):
        await OutboxRelay(storage=storage, sink=BrokenSink()).relay_once()
    assert len(storage.rows) == 1
    assert storage.released == ["0"]


async def test_relay_run_survives_errors_and_stops_when_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="skincare_core.jobs.relay")
    jobs = [new_job("t", n=str(n)) for n in range(5)]
    storage, queue = ListOutbox(jobs, claim_failures=2), InMemoryQueue()
    relay = OutboxRelay(storage=storage, sink=queue, batch_size=2, **FAST)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay.run)
            await storage.drained.wait()
            await anyio.sleep(0.03)
            tg.cancel_scope.cancel()
    assert queue.jobs() == jobs
    failures = [r for r in caplog.records if r.message == "outbox.relay_failed"]
    assert len(failures) == 2
    assert "database unreachable" in str(fields(failures[0], "error")[0])
    relayed = [vars(r)["count"] for r in caplog.records if r.message == "outbox.relayed"]
    assert sum(relayed) == 5


def test_system_clock_is_aware_utc_now() -> None:
    before = datetime.now(UTC)
    now = SystemClock().now()
    assert now.tzinfo is not None
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= datetime.now(UTC)


def test_manual_clock_moves_only_when_advanced() -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    clock = ManualClock(start)
    assert clock.now() == clock.now() == start
    clock.advance(timedelta(hours=2))
    assert clock.now() == start + timedelta(hours=2)
    assert ManualClock().now().tzinfo is UTC


DATA = OrderEmail("SKN-1", (), 10_000, "job-1")


async def test_recording_email_fails_as_told_then_records() -> None:
    email = RecordingEmailService()
    email.fail_next(2, error=TimeoutError("slow provider"))
    for _ in range(2):
        with pytest.raises(TimeoutError):
            await email.send_order_confirmation("a@example.com", DATA)
    email.fail_next()
    with pytest.raises(ConnectionError):
        await email.send_payment_received("a@example.com", DATA)
    await email.send_payment_received("a@example.com", DATA)
    [mail] = email.sent
    assert (mail.kind, mail.to, mail.data) == ("payment_received", "a@example.com", DATA)
    assert email.of_kind("order_confirmation") == []


async def test_recording_email_can_be_slow() -> None:
    email = RecordingEmailService(delay=0.05)
    start = anyio.current_time()
    await email.send_order_confirmation("a@example.com", DATA)
    assert anyio.current_time() - start >= 0.05
    assert len(email.of_kind("order_confirmation")) == 1
