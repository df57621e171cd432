"""A hypothesis state machine of InMemoryQueue against a plain model, on a fake clock.

Hypothesis has no async rules: the queue's coroutines run through one blocking portal.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from skincare_core.jobs.envelope import enqueue as enqueue_job
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.testing.jobs import InMemoryQueue

VISIBILITY = 10.0
DELAY = 5.0
EPOCH = datetime(2026, 12, 1, tzinfo=UTC)


@attrs.define
class Modelled:
    """What the model knows of a live job."""

    seq: int
    attempts: int = 0
    visible_at: float = 0.0
    receipt: str | None = None
    leased: bool = False
    unique_key: str | None = None


class InMemoryQueueMachine(RuleBasedStateMachine):
    """Rules are queue operations; after each, the queue and the model must agree."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self._portal_cm = start_blocking_portal("asyncio")
        self.portal: BlockingPortal = self._portal_cm.__enter__()
        self.queue = InMemoryQueue(
            visibility_timeout=timedelta(seconds=VISIBILITY),
            wait=timedelta(0),
            monotonic=lambda: self.now,
            wall_clock=lambda: EPOCH + timedelta(seconds=self.now),
        )
        self.live: dict[str, Modelled] = {}
        self.dead: dict[str, int] = {}
        self.held: list[Message] = []
        self.seq = itertools.count()

    def call(self, method: Any, *args: Any) -> Any:
        return self.portal.call(method, *args)

    def teardown(self) -> None:
        self._portal_cm.__exit__(None, None, None)

    @rule(kind=st.sampled_from(["a", "b"]))
    def enqueue(self, kind: str) -> None:
        job = new_job(kind)
        self.call(enqueue_job, self.queue, job)
        self.live[job.id] = Modelled(next(self.seq), visible_at=self.now)

    @rule(key=st.sampled_from(["k1", "k2"]), delayed=st.booleans())
    def enqueue_unique(self, key: str, delayed: bool) -> None:
        job = new_job("u")
        delay = timedelta(seconds=DELAY if delayed else 0)
        added = self.call(lambda: enqueue_job(self.queue, job, delay=delay, unique_key=key))
        assert added is all(m.unique_key != key for m in self.live.values())
        if added:
            visible_at = self.now + delay.total_seconds()
            self.live[job.id] = Modelled(next(self.seq), visible_at=visible_at, unique_key=key)

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        job_id = data.draw(st.sampled_from([*self.live, *self.dead, "unknown"]))
        entry = self.live.get(job_id)
        running = entry is not None and entry.leased and entry.visible_at > self.now
        assert self.call(self.queue.cancel, job_id) is (entry is not None and not running)
        if entry is not None and not running:
            del self.live[job_id]

    @rule(limit=st.integers(min_value=1, max_value=4))
    def receive(self, limit: int) -> None:
        # Earliest due first, then enqueue order (every job here has the default priority).
        visible = sorted(
            (m.visible_at, m.seq, job_id)
            for job_id, m in self.live.items()
            if m.visible_at <= self.now
        )
        expected = [job_id for _, _, job_id in visible[:limit]]
        messages = self.call(self.queue.receive, limit)
        assert [m.job.id for m in messages] == expected
        for message in messages:
            entry = self.live[message.job.id]
            entry.attempts += 1
            entry.visible_at = self.now + VISIBILITY
            entry.receipt = message.receipt
            entry.leased = True
            assert message.attempts == entry.attempts
        self.held += messages

    def _is_live(self, message: Message) -> bool:
        entry = self.live.get(message.job.id)
        return entry is not None and entry.receipt == message.receipt

    @precondition(lambda self: self.held)
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        message = data.draw(st.sampled_from(self.held))
        self.call(self.queue.ack_many, [message])
        if self._is_live(message):
            del self.live[message.job.id]

    @precondition(lambda self: self.held)
    @rule(data=st.data())
    def nack_now(self, data: st.DataObject) -> None:
        message = data.draw(st.sampled_from(self.held))
        self.call(self.queue.retry_many, [Retry(message, timedelta(0))])
        if self._is_live(message):
            self.live[message.job.id].visible_at = self.now
            self.live[message.job.id].leased = False

    @precondition(lambda self: self.held)
    @rule(data=st.data())
    def dead_letter(self, data: st.DataObject) -> None:
        message = data.draw(st.sampled_from(self.held))
        self.call(self.queue.dead_letter_many, [Burial(message, "model says so")])
        if self._is_live(message):
            self.dead[message.job.id] = self.live.pop(message.job.id).attempts

    @precondition(lambda self: self.dead)
    @rule(data=st.data())
    def redrive(self, data: st.DataObject) -> None:
        job_id = data.draw(st.sampled_from(sorted(self.dead)))
        assert self.call(self.queue.redrive, job_id) is True
        del self.dead[job_id]
        self.live[job_id] = Modelled(next(self.seq), visible_at=self.now)

    @rule()
    def redrive_unknown(self) -> None:
        assert self.call(self.queue.redrive, "no-such-job") is False

    @rule()
    def redrive_all(self) -> None:
        # The queue puts them back oldest death first, the order list() gives.
        dead_ids = [d.job.id for d in self.call(self._list)]
        assert self.call(self.queue.redrive_all) == len(self.dead)
        for job_id in dead_ids:
            self.live[job_id] = Modelled(next(self.seq), visible_at=self.now)
        self.dead.clear()

    @rule()
    def purge(self) -> None:
        assert self.call(self.queue.purge) == len(self.dead)
        self.dead.clear()

    @rule(seconds=st.sampled_from([0.5, DELAY, VISIBILITY + 0.5]))
    def advance(self, seconds: float) -> None:
        self.now += seconds

    async def _list(self) -> list[Any]:
        return await self.queue.list(limit=1000)

    @invariant()
    def queue_agrees_with_the_model(self) -> None:
        assert self.queue.depth == len(self.live)
        assert [j.id for j in self.queue.jobs()] == sorted(
            self.live, key=lambda i: self.live[i].seq
        )
        assert self.call(self.queue.count) == len(self.dead)
        for key in ("k1", "k2"):
            held = any(m.unique_key == key for m in self.live.values())
            assert self.queue.unique_key_taken(key) is held
        dead = {d.job.id: (d.attempts, d.error) for d in self.call(self._list)}
        assert dead == {job_id: (n, "model says so") for job_id, n in self.dead.items()}


InMemoryQueueMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None
)
TestInMemoryQueueStateMachine = InMemoryQueueMachine.TestCase
