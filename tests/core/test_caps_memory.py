"""Core's concurrency caps contract on the in-memory kit, and the cap rules themselves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.caps import CapRoom, ConcurrencyCaps, running_by_cap
from skincare_core.testing.jobs import InMemoryQueues
from skincare_core.testing.jobs.caps_contract import (
    OTHER,
    QUEUE,
    Capped,
    CappedSubject,
    CapsContract,
)

_LEASE = timedelta(seconds=0.2)
_TICK = timedelta(seconds=0.05)


class TestInMemoryCaps(CapsContract):
    @pytest.fixture
    def capped(self) -> Capped:
        @asynccontextmanager
        async def subject(caps: ConcurrencyCaps) -> AsyncIterator[CappedSubject]:
            queues = InMemoryQueues(visibility_timeout=_LEASE, wait=_TICK, caps=caps)
            queue = queues.queue(QUEUE)
            yield CappedSubject(queue, queues.queue(OTHER), queue, _LEASE, _TICK)

        return subject


_JOBS = st.lists(st.tuples(st.sampled_from(["q1", "q2"]), st.sampled_from(["a", "b", "c"])))


@given(
    running=_JOBS,
    wanted=_JOBS,
    type_cap=st.integers(1, 3),
    queue_cap=st.integers(1, 4),
    key_cap=st.integers(1, 3),
)
def test_a_claim_never_takes_a_cap_past_its_limit(
    running: list[tuple[str, str]],
    wanted: list[tuple[str, str]],
    type_cap: int,
    queue_cap: int,
    key_cap: int,
) -> None:
    caps = ConcurrencyCaps(
        types={"a": type_cap}, queues={"q1": queue_cap}, keys={"k": key_cap}, shared={"b": "k"}
    )
    room = CapRoom(caps, running_by_cap(caps, running))
    taken = [job for job in wanted if room.take(*job)]
    after = running_by_cap(caps, running + taken)
    before = running_by_cap(caps, running)
    for cap, limit in caps.limits.items():
        # A cap already over (a limit lowered) takes nothing more; otherwise it fills up to it.
        assert after.get(cap, 0) <= max(limit, before.get(cap, 0))
        if before.get(cap, 0) >= limit:
            assert after.get(cap, 0) == before.get(cap, 0)
    # Whatever was left out had a full cap at its turn.
    assert all(job in taken or caps.caps_of(*job) for job in wanted)


def test_a_key_no_cap_names_is_refused() -> None:
    with pytest.raises(ValueError, match="share a key with no cap: smtp"):
        ConcurrencyCaps(shared={"mail": "smtp"})


_NAMES = st.sampled_from(["a", "b", "c", "d"])


@given(
    types=st.dictionaries(_NAMES, st.integers(1, 3)),
    shared=st.dictionaries(_NAMES, st.just("k")),
    queue=st.sampled_from(["q1", "q2"]),
    job_type=_NAMES,
)
def test_outside_a_capped_queue_only_a_capped_type_falls_under_a_cap(
    types: dict[str, int], shared: dict[str, str], queue: str, job_type: str
) -> None:
    caps = ConcurrencyCaps(types=types, queues={"q1": 2}, keys={"k": 1}, shared=shared)
    under = bool(caps.caps_of(queue, job_type))
    assert under == (queue == "q1" or job_type in caps.capped_types)
    assert list(caps.capped_types) == sorted(caps.capped_types)
