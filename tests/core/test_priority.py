"""Priority inside a named queue: the in-memory kit receives the most urgent due job first, then
the earliest due; a unit of work's outbox gives a job its type's priority unless the add names
one; priorities outside 1..4 are refused where they are given."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.definitions import Definitions, JobDefinition
from skincare_core.jobs.envelope import RoutedOutbox, enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.priority import DEFAULT_PRIORITY, PRIORITIES, check_priority
from skincare_core.jobs.routing import QueueRoutes
from skincare_core.testing.jobs import InMemoryQueue
from tests.core.test_enqueue import RecordingWriter


async def _drain(queue: InMemoryQueue, batch: int) -> list[Job]:
    jobs: list[Job] = []
    while messages := await queue.receive(batch):
        await queue.ack_many(messages)
        jobs += [m.job for m in messages]
    return jobs


@given(priorities=st.lists(st.sampled_from(PRIORITIES), max_size=30), batch=st.integers(1, 7))
def test_the_memory_queue_receives_by_priority_then_in_due_order(
    priorities: list[int], batch: int
) -> None:
    async def run() -> tuple[list[Job], list[Job]]:
        queue = InMemoryQueue(wait=timedelta(0))
        jobs = [new_job("t", n=str(n)) for n in range(len(priorities))]
        for job, priority in zip(jobs, priorities, strict=True):
            await enqueue(queue, job, priority=priority)
        expected = [
            job for _, _, job in sorted(zip(priorities, range(len(jobs)), jobs, strict=True))
        ]
        return await _drain(queue, batch), expected

    received, expected = anyio.run(run)
    assert received == expected


@pytest.mark.anyio
async def test_the_outbox_gives_a_job_its_types_priority_unless_the_add_names_one() -> None:
    writer = RecordingWriter()
    outbox = RoutedOutbox(writer, QueueRoutes().with_priorities({"resend_confirmation": 1}))
    await outbox.add(new_job("resend_confirmation"))
    await outbox.add(new_job("resend_confirmation"), priority=3)
    await outbox.add(new_job("marketing"))
    assert [e.priority for e in writer.given] == [1, 3, DEFAULT_PRIORITY]


def test_routes_keep_their_priorities_when_more_types_are_routed() -> None:
    routes = QueueRoutes({"a": "bulk"}, priorities={"a": 4}).with_types({"b": "critical"})
    assert (routes.priority_of("a"), routes.priority_of("b")) == (4, DEFAULT_PRIORITY)
    assert routes.queue_of("b") == "critical"


@given(value=st.integers(-10, 10))
def test_a_priority_is_an_integer_from_1_to_4(value: int) -> None:
    if value in PRIORITIES:
        assert check_priority(value) == value
        assert QueueRoutes(priorities={"t": value}).priority_of("t") == value
    else:
        with pytest.raises(ValueError, match="invalid priority"):
            QueueRoutes(priorities={"t": value})


@frozen
class Nudge:
    """A typed job's arguments for the definition tests."""

    order_id: int


async def _ignore(args: Nudge) -> None:
    del args


@given(own=st.sampled_from(PRIORITIES), asked=st.none() | st.sampled_from(PRIORITIES))
def test_a_typed_job_takes_its_definitions_priority_unless_the_call_names_one(
    own: int, asked: int | None
) -> None:
    nudge = JobDefinition("nudge", Nudge, _ignore, priority=own)
    envelope = nudge.job(Nudge(order_id=1), priority=asked)
    assert envelope.priority == (own if asked is None else asked)
    routed = Definitions(nudge).routes.priority_of("nudge")
    assert routed == own


def test_a_definition_refuses_a_priority_outside_1_to_4() -> None:
    with pytest.raises(ValueError, match="invalid priority 5"):
        JobDefinition("nudge", Nudge, _ignore, priority=5)
    with pytest.raises(ValueError, match="invalid priority 0"):
        JobDefinition("nudge", Nudge, _ignore).job(Nudge(order_id=1), priority=0)
