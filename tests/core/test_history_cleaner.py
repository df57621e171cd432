"""The history cleaner: prunes what its retention lets go, round after round, and outlives an
outage of the history's database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.history import (
    PRUNE_BATCH,
    HistoryCleaner,
    HistoryQuery,
    JobRecord,
    Retention,
)
from skincare_core.jobs.job import new_job
from skincare_core.jobs.ports import Burial
from skincare_core.testing.jobs import InMemoryQueues
from tests.log_records import fields

pytestmark = pytest.mark.anyio


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 6, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class Down:
    """A history whose database is away."""

    async def find(self, query: HistoryQuery) -> list[JobRecord]:
        raise Unavailable("down")

    async def get(self, job_id: str) -> JobRecord | None:
        raise Unavailable("down")

    async def prune(self, retention: Retention, *, batch: int = PRUNE_BATCH) -> int:
        raise Unavailable("database unavailable")


async def test_a_round_prunes_done_jobs_after_a_day_and_dead_ones_after_two_weeks() -> None:
    clock = Clock()
    queues = InMemoryQueues(wall_clock=clock, wait=timedelta(0))
    queue = queues.queue()
    done, dead = new_job("t"), new_job("t")
    for job in (done, dead):
        await enqueue(queue, job)
    await queue.ack_many(await queue.receive(1))
    [message] = await queue.receive(1)
    await queue.dead_letter_many([Burial(message, "E: x")])
    cleaner = HistoryCleaner(queues.history, Retention())
    clock.now += timedelta(hours=23)
    assert await cleaner.prune_once() == 0
    clock.now += timedelta(hours=2)
    assert await cleaner.prune_once() == 1
    assert [r.id for r in await queues.history.find(HistoryQuery())] == [dead.id]
    clock.now += timedelta(days=14)
    assert await cleaner.prune_once() == 1


async def test_an_outage_is_logged_and_the_next_round_tries_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cleaner = HistoryCleaner(Down(), Retention(), every=timedelta(milliseconds=10))
    with anyio.move_on_after(0.1):
        await cleaner.run()
    failures = [r for r in caplog.records if r.getMessage() == "history.prune_failed"]
    assert len(failures) >= 2
    assert "database unavailable" in str(fields(failures[0], "error")[0])


def test_a_cleaner_needs_a_period_and_a_batch() -> None:
    with pytest.raises(ValueError, match="positive"):
        HistoryCleaner(Down(), Retention(), every=timedelta(0))
    with pytest.raises(ValueError, match="batch"):
        HistoryCleaner(Down(), Retention(), batch=0)
