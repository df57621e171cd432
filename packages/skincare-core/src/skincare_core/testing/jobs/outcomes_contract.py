"""The outcomes contract: what every backend's `JobOutcomes` counts, run inside `QueueContract`.

Done is an ack, failed a job moved to the dead letters; a retry, a stale receipt's settle and a
cancel count nothing, and each named queue counts its own jobs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.outcomes import NONE_FINISHED, RECENT, JobOutcomes, OutcomeCounts
from skincare_core.jobs.ports import Burial, Queue, Retry

if TYPE_CHECKING:
    # contract.py imports this module: the subject's class is needed for type checking only.
    from skincare_core.testing.jobs.contract import QueueSubject


async def _receive(queue: Queue) -> Message:
    with anyio.fail_after(10):
        while not (messages := await queue.receive(1)):
            pass
    return messages[0]


def _outcomes(subject: QueueSubject) -> JobOutcomes:
    assert subject.outcomes is not None, "the outcomes contract's subject needs `outcomes`"
    return subject.outcomes


async def _finished(subject: QueueSubject, queue: Queue) -> OutcomeCounts:
    return (await _outcomes(subject).recent(RECENT)).get(queue.name, NONE_FINISHED)


class OutcomesContract:
    """Jobs done and failed per named queue over the last minutes."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject on a fresh empty queue."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_nothing_finished_counts_nothing(self, subject: QueueSubject) -> None:
        assert await _finished(subject, subject.queue) == NONE_FINISHED

    async def test_acks_count_done_and_dead_letters_failed(self, subject: QueueSubject) -> None:
        for n in range(3):
            await enqueue(subject.queue, new_job("contract.outcome", n=str(n)))
        await subject.queue.ack_many([await _receive(subject.queue) for _ in range(2)])
        await subject.queue.dead_letter_many(
            [Burial(await _receive(subject.queue), "PermanentJobError: x")]
        )
        assert await _finished(subject, subject.queue) == OutcomeCounts(done=2, failed=1)
        await enqueue(subject.queue, new_job("contract.outcome"))
        await subject.queue.ack_many([await _receive(subject.queue)])
        assert await _finished(subject, subject.queue) == OutcomeCounts(done=3, failed=1)

    async def test_a_retry_or_a_stale_receipt_counts_nothing(self, subject: QueueSubject) -> None:
        await enqueue(subject.queue, new_job("contract.outcome"))
        first = await _receive(subject.queue)
        await subject.queue.retry_many([Retry(first, timedelta(0))])
        again = await _receive(subject.queue)
        await subject.queue.ack_many([first])
        await subject.queue.dead_letter_many([Burial(first, "stale")])
        assert await _finished(subject, subject.queue) == NONE_FINISHED
        await subject.queue.ack_many([again])
        assert await _finished(subject, subject.queue) == OutcomeCounts(done=1, failed=0)

    async def test_each_named_queue_counts_its_own_jobs(self, subject: QueueSubject) -> None:
        other = subject.other
        assert other is not None, "the outcomes contract's subject needs `other`"
        await enqueue(other, new_job("contract.outcome"))
        await other.dead_letter_many([Burial(await _receive(other), "PermanentJobError: other")])
        assert await _finished(subject, other) == OutcomeCounts(done=0, failed=1)
        assert await _finished(subject, subject.queue) == NONE_FINISHED
