"""The queue stats contract: what every `QueueStats` adapter counts, run inside `QueueContract`.

The counts are checked after each step, not only at the end: a backend counting a leased job as
ready (or a dead one as leased) fails here even if the totals add up.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Burial, QueueCounts, Retry

if TYPE_CHECKING:
    # contract.py imports this module: the subject's class is needed for type checking only.
    from skincare_core.testing.jobs.contract import QueueSubject


async def _receive_one(subject: QueueSubject) -> Message:
    with anyio.fail_after(10):
        while True:
            messages = await subject.queue.receive(1)
            if messages:
                assert len(messages) == 1
                return messages[0]


async def _counts(subject: QueueSubject) -> tuple[int, int, int, int]:
    counts = await subject.stats.stats()
    return (counts.ready, counts.scheduled, counts.leased, counts.dead)


class QueueStatsContract:
    """Ready, scheduled, leased and dead counts, and the oldest ready job's age."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject on a fresh empty queue."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_an_empty_queue_counts_nothing(self, subject: QueueSubject) -> None:
        assert await subject.stats.stats() == QueueCounts(0, 0, 0, 0, None)

    async def test_each_job_is_counted_in_the_state_it_is_in(self, subject: QueueSubject) -> None:
        jobs: list[Job] = [new_job("contract.stats", n=str(n)) for n in range(3)]
        for job in jobs:
            await enqueue(subject.queue, job)
        assert await _counts(subject) == (3, 0, 0, 0)
        first = await _receive_one(subject)
        assert await _counts(subject) == (2, 0, 1, 0)
        await subject.queue.dead_letter_many([Burial(first, "PermanentJobError: counted")])
        assert await _counts(subject) == (2, 0, 0, 1)

    async def test_a_job_waiting_out_a_retry_delay_is_not_ready(
        self, subject: QueueSubject
    ) -> None:
        await enqueue(subject.queue, new_job("contract.stats"))
        await subject.queue.retry_many([Retry(await _receive_one(subject), timedelta(minutes=5))])
        ready, scheduled, leased, dead = await _counts(subject)
        # SQS hides a retried message with a visibility change, so it counts it as leased.
        assert (ready, scheduled + leased, dead) == (0, 1, 0)

    async def test_the_oldest_ready_age_is_how_long_it_has_waited(
        self, subject: QueueSubject
    ) -> None:
        await enqueue(subject.queue, new_job("contract.stats"))
        await anyio.sleep(0.3)
        age = (await subject.stats.stats()).oldest_ready_age
        # None where the backend cannot tell (SQS); otherwise at least the time slept.
        assert age is None or timedelta(seconds=0.3) <= age < timedelta(seconds=30)
        await subject.queue.dead_letter_many(
            [Burial(await _receive_one(subject), "PermanentJobError: aged")]
        )
        assert (await subject.stats.stats()).oldest_ready_age is None

    async def test_a_named_queue_counts_only_its_own_jobs(self, subject: QueueSubject) -> None:
        other = subject.other
        assert other is not None, "the stats contract's subject needs `other`"
        await enqueue(other, new_job("contract.stats"))
        await enqueue(other, new_job("contract.stats"))
        mine = await subject.stats.stats(queue=subject.queue.name)
        assert (mine.ready, mine.dead, mine.oldest_ready_age) == (0, 0, None)
        assert (await subject.stats.stats(queue=other.name)).ready == 2
        assert (await subject.stats.stats()).ready == 2
        assert await subject.stats.stats(queue="no-such-queue") == QueueCounts(0, 0, 0, 0, None)
