"""The concurrency caps contract: a backend that enforces caps runs these tests unchanged.

Subclass `CapsContract` and override `capped`, a fixture giving a factory: given the caps, an
async context manager yielding a `CappedSubject` on fresh, empty queues: `queue` and `other`,
the named queues `QUEUE` and `OTHER`; `twin`, the `queue` as a second worker process would open
it, sharing the caps; the lease `visibility`, and `tick` as in `QueueSubject`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from typing import TypeAlias

import anyio
import pytest
from attrs import frozen

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.ports import Queue, Retry

QUEUE, OTHER = "capped", "other"
"""The names of the subject's two queues."""


@frozen
class CappedSubject:
    """Queues of one backend opened with the same caps."""

    queue: Queue
    other: Queue
    twin: Queue
    visibility: timedelta
    tick: timedelta


Capped: TypeAlias = Callable[[ConcurrencyCaps], AbstractAsyncContextManager[CappedSubject]]


async def receive_all(queue: Queue, wanted: int = 10) -> list[Message]:
    """Receive until a receive comes back with nothing; every message leased meanwhile."""
    got: list[Message] = []
    with anyio.fail_after(10):
        while batch := await queue.receive(wanted):
            got += batch
    return got


def types_of(messages: list[Message]) -> list[str]:
    """The job types of `messages`, sorted."""
    return sorted(m.job.type for m in messages)


class CapsContract:
    """At most N running per type, queue and key, across processes; a held-back job spends no
    attempt; a slot comes back when its job is acked, retried or its lease expires."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    def capped(self) -> Capped:
        """Override: a factory of subjects with the given caps."""
        raise NotImplementedError

    async def test_a_type_cap_holds_back_its_type_only(self, capped: Capped) -> None:
        async with capped(ConcurrencyCaps(types={"mail": 2})) as subject:
            for n in range(5):
                await enqueue(subject.queue, new_job("mail", n=str(n)))
            await enqueue(subject.queue, new_job("report"))
            got = await receive_all(subject.queue)
            assert types_of(got) == ["mail", "mail", "report"]
            assert await receive_all(subject.twin) == []
            # The slot of an acked job is free for the next claim, of any process.
            await subject.queue.ack_many([m for m in got if m.job.type == "mail"][:1])
            [next_one] = await receive_all(subject.twin)
            # Held back until now, never leased: its first attempt.
            assert (next_one.job.type, next_one.attempts) == ("mail", 1)

    async def test_jobs_outside_the_caps_are_claimed_around_a_full_cap(
        self, capped: Capped
    ) -> None:
        async with capped(ConcurrencyCaps(types={"mail": 1})) as subject:
            for kind in ["report"] * 4 + ["mail"] * 3 + ["report"] * 4:
                await enqueue(subject.queue, new_job(kind))
            got = await receive_all(subject.queue, wanted=3)
            assert types_of(got) == ["mail"] + ["report"] * 8
            await subject.queue.ack_many([m for m in got if m.job.type == "report"])
            # The held-back mails come one at a time as their slot frees, in any process.
            for _ in range(2):
                await subject.queue.ack_many([m for m in got if m.job.type == "mail"])
                got = []
                with anyio.fail_after(10):
                    while not got:
                        got = await subject.twin.receive(3)
                assert types_of(got) == ["mail"]

    async def test_a_queue_cap_counts_every_type_of_its_queue(self, capped: Capped) -> None:
        async with capped(ConcurrencyCaps(queues={QUEUE: 3})) as subject:
            for n in range(4):
                await enqueue(subject.queue, new_job(f"t{n % 2}", n=str(n)))
                await enqueue(subject.other, new_job("free", n=str(n)))
            got = await receive_all(subject.queue) + await receive_all(subject.twin)
            assert len(got) == 3
            assert len(await receive_all(subject.other)) == 4

    async def test_a_key_cap_is_shared_by_its_types_across_queues(self, capped: Capped) -> None:
        caps = ConcurrencyCaps(keys={"smtp": 2}, shared={"mail": "smtp", "receipt": "smtp"})
        async with capped(caps) as subject:
            for n in range(3):
                await enqueue(subject.queue, new_job("mail", n=str(n)))
                await enqueue(subject.other, new_job("receipt", n=str(n)))
            got = await receive_all(subject.queue) + await receive_all(subject.other)
            got += await receive_all(subject.twin)
            assert len(got) == 2

    async def test_a_retried_job_frees_its_slot(self, capped: Capped) -> None:
        async with capped(ConcurrencyCaps(types={"mail": 1})) as subject:
            await enqueue(subject.queue, new_job("mail", n="1"))
            await enqueue(subject.queue, new_job("mail", n="2"))
            [first] = await receive_all(subject.queue)
            await subject.queue.retry_many([Retry(first, timedelta(minutes=5))])
            [second] = await receive_all(subject.twin)
            assert second.job.payload["n"] == "2"

    async def test_an_expired_lease_gives_its_slot_back(self, capped: Capped) -> None:
        # A worker that died holds its slots only until its leases expire.
        async with capped(ConcurrencyCaps(types={"mail": 1})) as subject:
            await enqueue(subject.queue, new_job("mail", n="1"))
            await enqueue(subject.queue, new_job("mail", n="2"))
            assert len(await receive_all(subject.queue)) == 1
            assert await receive_all(subject.twin) == []
            await anyio.sleep((subject.visibility + subject.tick).total_seconds())
            assert len(await receive_all(subject.twin)) == 1
