"""The priority part of the queue contract: inside a named queue the most urgent due job is
received first, then the earliest due. A backend with no order inside a queue (SQS) refuses a
priority other than the default with `PriorityUnsupported` and sends nothing; its subject says
so with `priorities=False`. `QueueContract` includes `PriorityContract`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope, enqueue
from skincare_core.jobs.errors import PriorityUnsupported
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.ports import Burial, Queue
from skincare_core.jobs.priority import DEFAULT_PRIORITY, LEAST_URGENT, MOST_URGENT
from skincare_core.testing.jobs.scheduling_contract import nothing_on, receive_from

if TYPE_CHECKING:
    from skincare_core.testing.jobs.contract import QueueSubject


async def received_in_order(queue: Queue, count: int) -> list[Job]:
    """Receive and ack `count` messages one at a time; their jobs in the order received."""
    jobs = []
    for _ in range(count):
        message = await receive_from(queue)
        await queue.ack_many([message])
        jobs.append(message.job)
    return jobs


def _levels(subject: QueueSubject) -> tuple[int, int]:
    """The most and least urgent priorities the subject's backend takes."""
    if subject.priorities:
        return MOST_URGENT, LEAST_URGENT
    return DEFAULT_PRIORITY, DEFAULT_PRIORITY


class PriorityContract:
    """Priority order inside a queue, or a clear refusal where the backend has none."""

    pytestmark = pytest.mark.anyio

    async def test_the_most_urgent_due_job_comes_first_then_the_earliest_due(
        self, subject: QueueSubject
    ) -> None:
        queue = subject.queue
        low_a, low_b, usual, urgent = (new_job("contract", n=str(n)) for n in range(4))
        if not subject.priorities:
            with pytest.raises(PriorityUnsupported):
                await enqueue(queue, urgent, priority=MOST_URGENT)
            assert await enqueue(queue, usual, priority=DEFAULT_PRIORITY) is True
            assert await received_in_order(queue, 1) == [usual]
            await nothing_on(queue)
            return
        await enqueue(queue, low_a, priority=LEAST_URGENT)
        await enqueue(queue, low_b, priority=LEAST_URGENT)
        await enqueue(queue, usual)
        await enqueue(queue, urgent, priority=MOST_URGENT)
        assert await received_in_order(queue, 4) == [urgent, usual, low_a, low_b]

    async def test_the_sink_keeps_each_envelopes_priority_or_sends_none(
        self, subject: QueueSubject
    ) -> None:
        assert subject.sink is not None
        later, sooner = new_job("contract", n="later"), new_job("contract", n="sooner")
        envelopes = [
            Envelope(later, subject.queue.name, priority=3),
            Envelope(sooner, subject.queue.name, priority=MOST_URGENT),
        ]
        if not subject.priorities:
            with pytest.raises(PriorityUnsupported):
                await subject.sink.enqueue_many(envelopes)
            await nothing_on(subject.queue)
            return
        assert await subject.sink.enqueue_many(envelopes) == 2
        assert await received_in_order(subject.queue, 2) == [sooner, later]

    async def test_an_urgent_job_not_yet_due_waits_behind_due_ones(
        self, subject: QueueSubject
    ) -> None:
        # Without priorities both go at the default one: the due job still comes first.
        top, bottom = _levels(subject)
        queue, delay = subject.queue, subject.tick * 2
        scheduled, due = new_job("contract", n="scheduled"), new_job("contract", n="due")
        await enqueue(queue, scheduled, delay=delay, priority=top)
        await enqueue(queue, due, priority=bottom)
        assert await received_in_order(queue, 1) == [due]
        await anyio.sleep((delay + subject.tick).total_seconds())
        assert await received_in_order(queue, 1) == [scheduled]

    async def test_a_redriven_job_keeps_its_priority(self, subject: QueueSubject) -> None:
        queue, (top, _) = subject.queue, _levels(subject)
        urgent, usual = new_job("contract", n="urgent"), new_job("contract", n="usual")
        await enqueue(queue, urgent, priority=top)
        await queue.dead_letter_many([Burial(await receive_from(queue), "contract: buried")])
        await enqueue(queue, usual)
        assert await subject.dead_letters.redrive(urgent.id) is True
        received = await received_in_order(queue, 2)
        # Without an order inside the queue, both come back, in either order.
        ids = [job.id for job in received]
        assert (
            ids == [urgent.id, usual.id]
            if subject.priorities
            else sorted(ids) == sorted([urgent.id, usual.id])
        )

    @pytest.mark.parametrize("priority", [0, 5, -1, True])
    async def test_a_priority_outside_1_to_4_is_refused_before_sending(
        self, subject: QueueSubject, priority: int
    ) -> None:
        with pytest.raises(ValueError, match="invalid priority"):
            await enqueue(subject.queue, new_job("contract"), priority=priority)
        await nothing_on(subject.queue)
