"""The history contract: every backend's `JobHistory` alike (a job's timeline, its states, the
search, the retention), on the same `QueueSubject` as `QueueContract`, whose `history` it needs.

Subclass `HistoryContract` beside your `QueueContract` subclass with the same `subject` fixture.
Times are compared with a little slack: a backend may date events by its database's clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.history import HistoryQuery, JobHistory, JobRecord, JobState, Retention
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.ports import Burial, Queue, Retry

if TYPE_CHECKING:
    from skincare_core.testing.jobs.contract import QueueSubject

_SLACK = timedelta(seconds=2)


def _history(subject: QueueSubject) -> JobHistory:
    assert subject.history is not None, "the history contract's subject needs `history`"
    return subject.history


async def _receive(queue: Queue) -> Message:
    with anyio.fail_after(10):
        while not (messages := await queue.receive(1)):
            pass
    return messages[0]


async def _record(subject: QueueSubject, job: Job) -> JobRecord:
    record = await _history(subject).get(job.id)
    assert record is not None, f"no history of job {job.id}"
    return record


async def _state_becomes(subject: QueueSubject, job: Job, state: JobState) -> JobRecord:
    # A backend may see a settle a moment late (SQS); the record must get there soon.
    with anyio.fail_after(10):
        while (record := await _record(subject, job)).state != state:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    return record


def _close(moment: datetime | None, to: datetime) -> bool:
    return moment is not None and abs(moment - to) < _SLACK


async def _ids(subject: QueueSubject, query: HistoryQuery) -> list[str]:
    return [r.id for r in await _history(subject).find(query)]


class HistoryContract:
    """A job's timeline, live and finished, found by id, type, state, queue, time and args."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject on fresh, empty queues with its `history`."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_a_done_job_keeps_its_timeline(self, subject: QueueSubject) -> None:
        job = new_job("contract.history", order_id="123")
        before = datetime.now(UTC)
        await enqueue(subject.queue, job)
        await subject.queue.ack_many([await _receive(subject.queue)])
        record = await _state_becomes(subject, job, "done")
        assert (record.type, record.queue, dict(record.payload)) == (
            job.type,
            subject.queue.name,
            {"order_id": "123"},
        )
        assert _close(record.enqueued_at, before)
        assert _close(record.finished_at, before)
        [attempt] = record.attempts_log
        assert (record.attempts, attempt.error, record.error) == (1, None, None)
        assert attempt.worker
        assert attempt.duration is not None
        assert attempt.duration >= timedelta(0)

    async def test_each_retry_is_an_attempt_with_its_error(self, subject: QueueSubject) -> None:
        job = new_job("contract.history")
        await enqueue(subject.queue, job)
        first = await _receive(subject.queue)
        await subject.queue.retry_many([Retry(first, timedelta(0), "ValueError: boom")])
        await subject.queue.ack_many([await _receive(subject.queue)])
        record = await _state_becomes(subject, job, "done")
        assert record.attempts == 2
        assert [a.error for a in record.attempts_log] == ["ValueError: boom", None]
        assert all(a.ended_at is not None for a in record.attempts_log)

    async def test_a_dead_job_keeps_its_reason(self, subject: QueueSubject) -> None:
        job = new_job("contract.history")
        await enqueue(subject.queue, job)
        await subject.queue.dead_letter_many(
            [Burial(await _receive(subject.queue), "PermanentJobError: no")]
        )
        record = await _state_becomes(subject, job, "dead")
        assert (record.attempts, record.error) == (1, "PermanentJobError: no")
        assert record.attempts_log[-1].error == "PermanentJobError: no"

    async def test_a_cancelled_job_is_kept_without_attempts(self, subject: QueueSubject) -> None:
        job = new_job("contract.history")
        await enqueue(subject.queue, job, delay=timedelta(minutes=5))
        assert await subject.queue.cancel(job.id) is True
        record = await _state_becomes(subject, job, "cancelled")
        assert (record.attempts, record.attempts_log) == (0, ())
        assert record.finished_at is not None

    async def test_a_live_job_is_enqueued_scheduled_running_or_retrying(
        self, subject: QueueSubject
    ) -> None:
        now, later = new_job("contract.history"), new_job("contract.history")
        await enqueue(subject.queue, later, delay=timedelta(minutes=5))
        await enqueue(subject.queue, now)
        assert (await _record(subject, now)).state == "enqueued"
        scheduled = await _record(subject, later)
        assert scheduled.state == "scheduled"
        assert _close(scheduled.due_at, datetime.now(UTC) + timedelta(minutes=5))
        message = await _receive(subject.queue)
        assert message.job == now
        assert (await _record(subject, now)).state == "running"
        await subject.queue.retry_many([Retry(message, timedelta(minutes=5), "E: later")])
        retrying = await _record(subject, now)
        assert (retrying.state, retrying.attempts, retrying.error) == ("retrying", 1, "E: later")

    async def test_find_by_argument_type_state_and_queue(self, subject: QueueSubject) -> None:
        other = subject.other
        assert other is not None, "the history contract's subject needs `other`"
        mine = new_job("contract.history.mail", order_id="123", user_id="9")
        theirs = new_job("contract.history.mail", order_id="124", user_id="9")
        elsewhere = new_job("contract.history.pdf", order_id="123")
        await enqueue(subject.queue, mine)
        await enqueue(subject.queue, theirs)
        await enqueue(other, elsewhere)
        await subject.queue.ack_many([await _receive(subject.queue)])
        await _state_becomes(subject, mine, "done")
        assert sorted(await _ids(subject, HistoryQuery(args={"order_id": "123"}))) == sorted(
            [mine.id, elsewhere.id]
        )
        both = HistoryQuery(args={"order_id": "123", "user_id": "9"})
        assert await _ids(subject, both) == [mine.id]
        assert await _ids(subject, HistoryQuery(job_type="contract.history.pdf")) == [elsewhere.id]
        assert await _ids(subject, HistoryQuery(state="done")) == [mine.id]
        assert await _ids(subject, HistoryQuery(queue=other.name)) == [elsewhere.id]
        assert await _ids(subject, HistoryQuery(job_id=theirs.id)) == [theirs.id]
        assert await _ids(subject, HistoryQuery(args={"order_id": "999"})) == []

    async def test_find_answers_newest_first_within_the_limit_and_time_range(
        self, subject: QueueSubject
    ) -> None:
        jobs = [new_job("contract.history.page", n=str(n)) for n in range(3)]
        for job in jobs:
            await enqueue(subject.queue, job)
            await anyio.sleep(0.02)
        assert await _ids(subject, HistoryQuery(job_type="contract.history.page", limit=2)) == [
            jobs[2].id,
            jobs[1].id,
        ]
        now = datetime.now(UTC)
        assert await _ids(subject, HistoryQuery(since=now + timedelta(minutes=1))) == []
        assert await _ids(subject, HistoryQuery(until=now - timedelta(minutes=1))) == []
        minute = timedelta(minutes=1)
        assert len(await _ids(subject, HistoryQuery(since=now - minute, until=now + minute))) == 3

    async def test_get_is_none_for_an_unknown_job(self, subject: QueueSubject) -> None:
        assert await _history(subject).get("no-such-job") is None
        assert await _ids(subject, HistoryQuery(job_id="no-such-job")) == []

    async def test_a_redriven_job_that_then_runs_is_done_once(self, subject: QueueSubject) -> None:
        job = new_job("contract.history")
        await enqueue(subject.queue, job)
        await subject.queue.dead_letter_many([Burial(await _receive(subject.queue), "E: first")])
        await _state_becomes(subject, job, "dead")
        assert await subject.dead_letters.redrive(job.id) is True
        await subject.queue.ack_many([await _receive(subject.queue)])
        record = await _state_becomes(subject, job, "done")
        assert await _ids(subject, HistoryQuery(job_id=job.id)) == [job.id]
        assert [a.error for a in record.attempts_log][-2:] == ["E: first", None]

    async def test_prune_deletes_finished_jobs_past_their_retention(
        self, subject: QueueSubject
    ) -> None:
        jobs = [new_job("contract.history.prune") for _ in range(3)]
        for job in jobs:
            await enqueue(subject.queue, job)
        done, dead = await _receive(subject.queue), await _receive(subject.queue)
        [live] = [j for j in jobs if j.id not in (done.job.id, dead.job.id)]
        await subject.queue.ack_many([done])
        await subject.queue.dead_letter_many([Burial(dead, "E: dead")])
        await _state_becomes(subject, dead.job, "dead")
        await anyio.sleep(1.5)
        retention = Retention(done=timedelta(seconds=1), dead=timedelta(days=1))
        assert await _history(subject).prune(retention, batch=1) == 1
        assert await _history(subject).get(done.job.id) is None
        assert (await _record(subject, dead.job)).state == "dead"
        assert (await _record(subject, live)).state == "enqueued"
