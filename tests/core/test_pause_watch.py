"""A worker's view of the pauses: read again at most every interval, kept through a failed read."""

from __future__ import annotations

import itertools

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.steering import NOTHING_PAUSED, Paused, PauseWatch, one_target
from skincare_core.testing.jobs.memory_steering import InMemoryPauses


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Counting(InMemoryPauses):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.failing = False

    async def paused(self) -> Paused:
        self.reads += 1
        if self.failing:
            raise Unavailable("database down")
        return await super().paused()


@given(st.lists(st.floats(min_value=0, max_value=2), min_size=1, max_size=30))
def test_the_pauses_are_read_at_most_once_per_interval(steps: list[float]) -> None:
    async def run() -> None:
        clock, pauses = _Clock(), _Counting()
        watch = PauseWatch(pauses, every=0.5, clock=clock)
        read_at: list[float] = []
        for step in steps:
            clock.now += step
            before = pauses.reads
            await watch.current()
            if pauses.reads > before:
                read_at.append(clock.now)
        assert all(b - a >= 0.5 for a, b in itertools.pairwise(read_at))
        assert read_at[0] == steps[0]

    anyio.run(run)


@pytest.mark.anyio
async def test_a_pause_is_seen_after_the_interval_and_kept_through_a_failed_read() -> None:
    clock, pauses = _Clock(), _Counting()
    watch = PauseWatch(pauses, every=0.5, clock=clock)
    assert await watch.current() == NOTHING_PAUSED
    await pauses.pause(queue="default")
    assert await watch.current() == NOTHING_PAUSED
    clock.now = 0.5
    assert (await watch.current()).queues == {"default"}
    pauses.failing = True
    clock.now = 1.0
    with pytest.raises(Unavailable):
        await watch.current()
    assert (await watch.current()).queues == {"default"}


@given(st.one_of(st.none(), st.text()), st.one_of(st.none(), st.text()))
def test_a_pause_names_exactly_one_target(queue: str | None, job_type: str | None) -> None:
    if (queue is None) == (job_type is None):
        with pytest.raises(ValueError, match="either"):
            one_target(queue, job_type)
    else:
        assert one_target(queue, job_type)[1] in (queue, job_type)


@given(st.sets(st.sampled_from("abc")), st.sets(st.sampled_from("xyz")), st.text(), st.text())
def test_a_job_is_held_by_its_queue_or_its_type(
    queues: set[str], types: set[str], queue: str, job_type: str
) -> None:
    assert Paused(queues, types).holds(queue, job_type) is (queue in queues or job_type in types)
