"""The scheduling half of the queue contract: delays, unique keys and cancel (`SchedulingContract`),
and named queues (`NamedQueueContract`). `QueueContract` includes both.

The subject must also give `other`, a second named queue of the same backend, and `sink`, the
backend's sink.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypedDict

import anyio
import pytest

from skincare_core.jobs.envelope import Envelope, enqueue
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Burial, JobSink, Queue, Retry

if TYPE_CHECKING:
    from skincare_core.testing.jobs.contract import QueueSubject


async def receive_from(queue: Queue, within: float = 10.0) -> Message:
    """Receive from `queue` until one message arrives."""
    with anyio.fail_after(within):
        while True:
            messages = await queue.receive(1)
            if messages:
                assert len(messages) == 1
                return messages[0]


async def jobs_from(queue: Queue, count: int) -> list[Job]:
    """Receive and ack `count` messages from `queue`; their jobs by id."""
    jobs = []
    for _ in range(count):
        message = await receive_from(queue)
        await queue.ack_many([message])
        jobs.append(message.job)
    return sorted(jobs, key=lambda job: job.id)


def by_id(*jobs: Job) -> list[Job]:
    """The jobs sorted by id, to compare with `jobs_from`."""
    return sorted(jobs, key=lambda job: job.id)


async def nothing_on(queue: Queue) -> None:
    """No message of `queue` is visible now."""
    assert await queue.receive(10) == []


async def bury_on(queue: Queue, job: Job) -> None:
    """Enqueue `job` on `queue` and dead-letter it."""
    assert await enqueue(queue, job) is True
    await queue.dead_letter_many([Burial(await receive_from(queue), "contract: buried")])


class _Schedule(TypedDict, total=False):
    delay: timedelta
    not_before: datetime
    unique_key: str


def _ticks(subject: QueueSubject, n: float) -> timedelta:
    return subject.tick * n


def _other(subject: QueueSubject) -> Queue:
    assert subject.other is not None, "the scheduling contract's subject needs `other`"
    return subject.other


def _sink(subject: QueueSubject) -> JobSink:
    assert subject.sink is not None, "the scheduling contract's subject needs `sink`"
    return subject.sink


async def _sleep(duration: timedelta) -> None:
    await anyio.sleep(duration.total_seconds())


class _Subject:
    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject (with `other` and `sink`) on fresh, empty queues."""
        raise NotImplementedError
        yield  # pragma: no cover


class SchedulingContract(_Subject):
    """Delayed delivery, not_before, unique keys, cancel."""

    async def test_a_delayed_job_is_delivered_only_after_its_delay(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract.delayed")
        assert await enqueue(subject.queue, job, delay=_ticks(subject, 4)) is True
        await nothing_on(subject.queue)
        await _sleep(_ticks(subject, 5))
        message = await receive_from(subject.queue)
        assert (message.job, message.attempts) == (job, 1)

    async def test_not_before_later_waits_and_earlier_is_due_now(
        self, subject: QueueSubject
    ) -> None:
        later, earlier = new_job("contract.later"), new_job("contract.earlier")
        now = datetime.now(UTC)
        await enqueue(subject.queue, later, not_before=now + _ticks(subject, 4))
        await enqueue(subject.queue, earlier, not_before=now - timedelta(hours=1))
        assert await jobs_from(subject.queue, 1) == [earlier]
        await nothing_on(subject.queue)
        await _sleep(_ticks(subject, 5))
        assert (await receive_from(subject.queue)).job == later

    async def test_a_bad_schedule_is_refused_and_adds_nothing(self, subject: QueueSubject) -> None:
        job, now = new_job("contract.bad"), datetime.now(UTC)
        schedules: list[_Schedule] = [
            {"delay": timedelta(seconds=1), "not_before": now},
            {"delay": timedelta(seconds=-1)},
            {"not_before": now.replace(tzinfo=None)},
            {"unique_key": ""},
        ]
        for schedule in schedules:
            with pytest.raises(ValueError):  # noqa: PT011 - each names its own mistake
                await enqueue(subject.queue, job, **schedule)
        await nothing_on(subject.queue)

    async def test_the_sink_honours_not_before(self, subject: QueueSubject) -> None:
        job = new_job("contract.sink_delayed")
        due = datetime.now(UTC) + _ticks(subject, 4)
        assert await _sink(subject).enqueue_many([Envelope(job, subject.queue.name, due)]) == 1
        await nothing_on(subject.queue)
        await _sleep(_ticks(subject, 5))
        assert (await receive_from(subject.queue)).job == job

    async def test_a_unique_key_adds_nothing_while_its_job_is_ready(
        self, subject: QueueSubject
    ) -> None:
        first, second = new_job("contract.unique"), new_job("contract.unique")
        assert await enqueue(subject.queue, first, unique_key="k") is True
        assert await enqueue(subject.queue, second, unique_key="k") is False
        assert await enqueue(subject.queue, second, unique_key="other-key") is True
        assert await jobs_from(subject.queue, 2) == by_id(first, second)
        await nothing_on(subject.queue)

    async def test_a_unique_key_is_held_while_running_and_freed_by_ack(
        self, subject: QueueSubject
    ) -> None:
        first, second = new_job("contract.unique"), new_job("contract.unique")
        await enqueue(subject.queue, first, unique_key="k")
        running = await receive_from(subject.queue)
        assert await enqueue(subject.queue, second, unique_key="k") is False
        await subject.queue.ack_many([running])
        assert await enqueue(subject.queue, second, unique_key="k") is True
        assert (await receive_from(subject.queue)).job == second

    async def test_a_unique_key_is_held_while_scheduled(self, subject: QueueSubject) -> None:
        delayed, retried = new_job("contract.unique"), new_job("contract.unique")
        await enqueue(subject.queue, delayed, unique_key="delayed", delay=timedelta(hours=1))
        assert await enqueue(subject.queue, new_job("x"), unique_key="delayed") is False
        await enqueue(subject.queue, retried, unique_key="retried")
        await subject.queue.retry_many(
            [Retry(await receive_from(subject.queue), timedelta(hours=1))]
        )
        assert await enqueue(subject.queue, new_job("x"), unique_key="retried") is False

    async def test_a_dead_job_frees_its_key_and_redrives_without_it(
        self, subject: QueueSubject
    ) -> None:
        dead, replacement = new_job("contract.unique"), new_job("contract.unique")
        await enqueue(subject.queue, dead, unique_key="k")
        await subject.queue.dead_letter_many(
            [Burial(await receive_from(subject.queue), "contract: died")]
        )
        assert await enqueue(subject.queue, replacement, unique_key="k") is True
        assert await subject.dead_letters.redrive(dead.id) is True
        assert await enqueue(subject.queue, new_job("x"), unique_key="k") is False
        assert await jobs_from(subject.queue, 2) == by_id(dead, replacement)

    async def test_concurrent_enqueues_of_one_key_add_exactly_one(
        self, subject: QueueSubject
    ) -> None:
        added: list[bool] = []

        async def add(n: int) -> None:
            job = new_job("contract.race", n=str(n))
            added.append(await enqueue(subject.queue, job, unique_key="race"))

        async with anyio.create_task_group() as tg:
            for n in range(20):
                tg.start_soon(add, n)
        assert sorted(added) == [False] * 19 + [True]
        await receive_from(subject.queue)
        await nothing_on(subject.queue)

    async def test_a_unique_key_spans_every_named_queue(self, subject: QueueSubject) -> None:
        assert await enqueue(subject.queue, new_job("contract.unique"), unique_key="k") is True
        assert await enqueue(_other(subject), new_job("contract.unique"), unique_key="k") is False
        await nothing_on(_other(subject))

    async def test_the_sink_adds_one_job_per_unique_key(self, subject: QueueSubject) -> None:
        jobs = [new_job("contract.unique", n=str(n)) for n in range(3)]
        name = subject.queue.name
        envelopes = [Envelope(jobs[0], name, unique_key="k"), Envelope(jobs[1], name, None, "k")]
        assert await _sink(subject).enqueue_many([*envelopes, Envelope(jobs[2], name)]) == 2
        assert await _sink(subject).enqueue_many([Envelope(new_job("x"), name, None, "k")]) == 0
        assert await jobs_from(subject.queue, 2) == by_id(jobs[0], jobs[2])

    async def test_cancel_removes_a_ready_job_once(self, subject: QueueSubject) -> None:
        job = new_job("contract.cancel")
        await enqueue(subject.queue, job, unique_key="k")
        assert await subject.queue.cancel(job.id) is True
        assert await subject.queue.cancel(job.id) is False
        await nothing_on(subject.queue)
        assert await enqueue(subject.queue, new_job("contract.cancel"), unique_key="k") is True

    async def test_cancel_removes_a_scheduled_job(self, subject: QueueSubject) -> None:
        delayed, retried = new_job("contract.cancel"), new_job("contract.cancel")
        await enqueue(subject.queue, delayed, delay=_ticks(subject, 2))
        assert await subject.queue.cancel(delayed.id) is True
        await enqueue(subject.queue, retried)
        await subject.queue.retry_many(
            [Retry(await receive_from(subject.queue), _ticks(subject, 2))]
        )
        assert await subject.queue.cancel(retried.id) is True
        await _sleep(_ticks(subject, 3))
        await nothing_on(subject.queue)

    async def test_cancel_leaves_a_running_job_to_finish(self, subject: QueueSubject) -> None:
        job = new_job("contract.cancel")
        await enqueue(subject.queue, job)
        running = await receive_from(subject.queue)
        assert await subject.queue.cancel(job.id) is False
        await subject.queue.extend_many([running], subject.visibility * 4)
        await _sleep(subject.visibility + subject.tick)
        await nothing_on(subject.queue)
        await subject.queue.ack_many([running])
        assert await subject.dead_letters.count() == 0

    async def test_cancel_of_an_unknown_or_dead_job_or_another_queues_is_false(
        self, subject: QueueSubject
    ) -> None:
        dead, elsewhere = new_job("contract.cancel"), new_job("contract.cancel")
        assert await subject.queue.cancel("no-such-job") is False
        await bury_on(subject.queue, dead)
        assert await subject.queue.cancel(dead.id) is False
        assert await subject.dead_letters.get(dead.id) is not None
        await enqueue(_other(subject), elsewhere)
        assert await subject.queue.cancel(elsewhere.id) is False
        assert (await receive_from(_other(subject))).job == elsewhere


class NamedQueueContract(_Subject):
    """Isolation between named queues; dead letters per queue."""

    async def test_a_job_is_received_only_from_its_own_queue(self, subject: QueueSubject) -> None:
        assert subject.queue.name != _other(subject).name
        job = new_job("contract.named")
        await enqueue(subject.queue, job)
        await nothing_on(_other(subject))
        assert (await receive_from(subject.queue)).job == job

    async def test_the_sink_sends_each_envelope_to_its_queue(self, subject: QueueSubject) -> None:
        here, there = new_job("contract.named"), new_job("contract.named")
        envelopes = [Envelope(here, subject.queue.name), Envelope(there, _other(subject).name)]
        assert await _sink(subject).enqueue_many(envelopes) == 2
        assert (await receive_from(_other(subject))).job == there
        assert (await receive_from(subject.queue)).job == here
        await nothing_on(_other(subject))

    async def test_dead_letters_are_counted_listed_and_redriven_per_queue(
        self, subject: QueueSubject
    ) -> None:
        here, there = new_job("contract.named"), new_job("contract.named")
        await bury_on(subject.queue, here)
        await bury_on(_other(subject), there)
        dlq = subject.dead_letters
        assert await dlq.count() == 2
        assert await dlq.count(queue=subject.queue.name) == 1
        [dead] = await dlq.list(queue=_other(subject).name)
        assert (dead.job, dead.queue) == (there, _other(subject).name)
        assert await dlq.list(queue="contract-no-such-queue") == []
        assert await dlq.redrive_all(queue=_other(subject).name) == 1
        await nothing_on(subject.queue)
        assert (await receive_from(_other(subject))).job == there
        assert [d.job for d in await dlq.list()] == [here]

    async def test_redrive_sends_a_job_back_to_the_queue_it_died_in(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract.named")
        await bury_on(_other(subject), job)
        dead = await subject.dead_letters.get(job.id)
        assert dead is not None
        assert dead.queue == _other(subject).name
        assert await subject.dead_letters.redrive(job.id) is True
        await nothing_on(subject.queue)
        assert (await receive_from(_other(subject))).job == job
