"""The queue contract suite: every Queue + DeadLetters + JobSink + QueueStats + JobOutcomes adapter
runs these tests unchanged (the stats tests are in `stats_contract`, which `DeliveryContract`
includes; the outcomes tests in `outcomes_contract`).

Subclass `QueueContract` in your adapter's tests and override the `subject` fixture to yield a
`QueueSubject` on fresh, empty queues whose lease is `visibility` and whose receive returns
within about `tick` when nothing is there. `QueueContract` is `DeliveryContract` (below) plus the
scheduling and named-queue tests of `scheduling_contract`, the ops and the outcomes contracts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import anyio
import pytest
from attrs import frozen

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.errors import JobTooLarge
from skincare_core.jobs.history import JobHistory
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.outcomes import JobOutcomes
from skincare_core.jobs.ports import Burial, DeadLetters, JobSink, Queue, QueueStats, Retry
from skincare_core.testing.jobs.ops_contract import OpsContract
from skincare_core.testing.jobs.outcomes_contract import OutcomesContract
from skincare_core.testing.jobs.priority_contract import PriorityContract
from skincare_core.testing.jobs.scheduling_contract import NamedQueueContract, SchedulingContract
from skincare_core.testing.jobs.stats_contract import QueueStatsContract


@frozen
class QueueSubject:
    """The adapter under test: a queue, its backend's dead letters, its timing, its stats, and
    (for the scheduling and named-queue tests) `other`, a second named queue, and the backend's
    `sink`; `outcomes` for the outcomes and ops tests; `priorities` False for a backend that
    refuses a priority (no order inside a queue); `history` for `HistoryContract`."""

    queue: Queue
    dead_letters: DeadLetters
    visibility: timedelta
    tick: timedelta
    stats: QueueStats
    other: Queue | None = None
    sink: JobSink | None = None
    outcomes: JobOutcomes | None = None
    priorities: bool = True
    history: JobHistory | None = None


async def receive_one(subject: QueueSubject, within: float = 10.0) -> Message:
    """Receive until one message arrives (adapters may return [] on a short poll)."""
    with anyio.fail_after(within):
        while True:
            messages = await subject.queue.receive(1)
            if messages:
                assert len(messages) == 1
                return messages[0]


async def assert_nothing(subject: QueueSubject) -> None:
    """No message is visible now."""
    assert await subject.queue.receive(10) == []


async def sleep_past(duration: timedelta, subject: QueueSubject) -> None:
    """Sleep past `duration` plus a tick of slack."""
    await anyio.sleep((duration + subject.tick).total_seconds())


class DeliveryContract(QueueStatsContract):
    """Delivery, ack, nack delay, attempts, leases, stale receipts, dead letters (get, list,
    redrive, purge), size, and the stats."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject on a fresh empty queue."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_delivers_the_enqueued_job_once_with_attempts_1(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract", order_id="7")
        await enqueue(subject.queue, job)
        message = await receive_one(subject)
        assert (message.job, message.attempts) == (job, 1)
        await assert_nothing(subject)

    async def test_receive_returns_at_most_max_messages_distinct_jobs(
        self, subject: QueueSubject
    ) -> None:
        jobs = [new_job("contract", n=str(n)) for n in range(5)]
        for job in jobs:
            await enqueue(subject.queue, job)
        got: list[Message] = []
        with anyio.fail_after(15):
            while len(got) < 5:
                batch = await subject.queue.receive(3)
                assert len(batch) <= 3
                got += batch
        assert sorted(m.job.id for m in got) == sorted(j.id for j in jobs)

    async def test_acked_job_never_comes_back(self, subject: QueueSubject) -> None:
        await enqueue(subject.queue, new_job("contract"))
        await subject.queue.ack_many([await receive_one(subject)])
        await sleep_past(subject.visibility, subject)
        await assert_nothing(subject)
        assert await subject.dead_letters.count() == 0

    async def test_ack_many_removes_live_jobs_and_skips_stale_receipts(
        self, subject: QueueSubject
    ) -> None:
        first, second = new_job("contract", n="1"), new_job("contract", n="2")
        await enqueue(subject.queue, first)
        stale = await receive_one(subject)
        await sleep_past(subject.visibility, subject)
        assert (await receive_one(subject)).job == first
        await enqueue(subject.queue, second)
        live_second = await receive_one(subject)
        await subject.queue.ack_many([])
        await subject.queue.ack_many([stale, live_second])
        await sleep_past(subject.visibility, subject)
        again = await receive_one(subject)
        assert (again.job, again.attempts) == (first, 3)
        await subject.queue.ack_many([again])
        await sleep_past(subject.visibility, subject)
        await assert_nothing(subject)

    async def test_retry_many_retries_each_live_job_and_skips_stale_receipts(
        self, subject: QueueSubject
    ) -> None:
        stale, live, batch = await _stale_and_two_live(subject)
        await subject.queue.retry_many([])
        await subject.queue.retry_many([Retry(m, timedelta(0)) for m in [stale, *batch]])
        again = [await receive_one(subject), await receive_one(subject)]
        assert sorted((m.job.id, m.attempts) for m in again) == sorted((m.job.id, 2) for m in batch)
        # The stale receipt's job is still leased by its newer delivery.
        await assert_nothing(subject)
        await subject.queue.ack_many([live, *again])

    async def test_dead_letter_many_buries_each_live_job_and_skips_stale_receipts(
        self, subject: QueueSubject
    ) -> None:
        stale, live, batch = await _stale_and_two_live(subject)
        await subject.queue.dead_letter_many([])
        reasons = [Burial(m, f"PermanentJobError: {m.job.payload['n']}") for m in batch]
        await subject.queue.dead_letter_many([Burial(stale, "stale"), *reasons])
        dead = await subject.dead_letters.list()
        assert sorted((d.job.id, d.attempts, d.error) for d in dead) == sorted(
            (b.message.job.id, 1, b.reason) for b in reasons
        )
        await assert_nothing(subject)
        await subject.queue.ack_many([live])
        await sleep_past(subject.visibility, subject)
        await assert_nothing(subject)

    async def test_nack_with_zero_delay_redelivers_with_attempts_2(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract")
        await enqueue(subject.queue, job)
        await subject.queue.retry_many([Retry(await receive_one(subject), timedelta(0))])
        again = await receive_one(subject)
        assert (again.job, again.attempts) == (job, 2)

    async def test_a_snooze_spends_no_attempt_and_counts_a_snooze(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract")
        await enqueue(subject.queue, job)
        first = await receive_one(subject)
        assert (first.attempts, first.snoozes) == (1, 0)
        await subject.queue.retry_many([Retry(first, timedelta(0), snooze=True)])
        second = await receive_one(subject)
        assert (second.job, second.attempts, second.snoozes) == (job, 1, 1)
        await subject.queue.retry_many([Retry(second, timedelta(0), snooze=True)])
        third = await receive_one(subject)
        assert (third.attempts, third.snoozes) == (1, 2)
        # A failure after snoozes spends an attempt as any failure does; the snoozes stay.
        await subject.queue.retry_many([Retry(third, timedelta(0))])
        fourth = await receive_one(subject)
        assert (fourth.attempts, fourth.snoozes) == (2, 2)

    async def test_a_snooze_delay_hides_the_job_until_it_passes(
        self, subject: QueueSubject
    ) -> None:
        await enqueue(subject.queue, new_job("contract"))
        delay = subject.tick * 2
        await subject.queue.retry_many([Retry(await receive_one(subject), delay, snooze=True)])
        await assert_nothing(subject)
        await sleep_past(delay, subject)
        assert (await receive_one(subject)).attempts == 1

    async def test_nack_delay_hides_the_job_until_it_passes(self, subject: QueueSubject) -> None:
        await enqueue(subject.queue, new_job("contract"))
        delay = subject.tick * 2
        await subject.queue.retry_many([Retry(await receive_one(subject), delay)])
        await assert_nothing(subject)
        await sleep_past(delay, subject)
        assert (await receive_one(subject)).attempts == 2

    async def test_expired_lease_redelivers_with_a_new_receipt(self, subject: QueueSubject) -> None:
        await enqueue(subject.queue, new_job("contract"))
        first = await receive_one(subject)
        await sleep_past(subject.visibility, subject)
        second = await receive_one(subject)
        assert second.receipt != first.receipt
        assert (second.job, second.attempts) == (first.job, 2)

    async def test_stale_receipt_changes_nothing(self, subject: QueueSubject) -> None:
        await enqueue(subject.queue, new_job("contract"))
        stale = await receive_one(subject)
        await sleep_past(subject.visibility, subject)
        live = await receive_one(subject)
        await subject.queue.ack_many([stale])
        await subject.queue.retry_many([Retry(stale, timedelta(0))])
        await subject.queue.extend_many([stale], subject.visibility * 4)
        await subject.queue.dead_letter_many([Burial(stale, "stale")])
        await assert_nothing(subject)
        assert await subject.dead_letters.count() == 0
        await subject.queue.ack_many([live])
        await sleep_past(subject.visibility, subject)
        await assert_nothing(subject)

    async def test_extend_many_keeps_every_lease_past_the_visibility_timeout(
        self, subject: QueueSubject
    ) -> None:
        await enqueue(subject.queue, new_job("contract"))
        await enqueue(subject.queue, new_job("contract"))
        leased = [await receive_one(subject), await receive_one(subject)]
        await subject.queue.extend_many(leased, subject.visibility * 4)
        await sleep_past(subject.visibility, subject)
        await assert_nothing(subject)
        await subject.queue.ack_many(leased)

    async def test_dead_letter_keeps_job_attempts_and_reason(self, subject: QueueSubject) -> None:
        job = new_job("contract", order_id="9")
        await enqueue(subject.queue, job)
        await subject.queue.retry_many([Retry(await receive_one(subject), timedelta(0))])
        await subject.queue.dead_letter_many(
            [Burial(await receive_one(subject), "PermanentJobError: bad")]
        )
        assert await subject.dead_letters.count() == 1
        [dead] = await subject.dead_letters.list()
        assert (dead.job, dead.attempts, dead.error) == (job, 2, "PermanentJobError: bad")
        await assert_nothing(subject)

    async def test_get_finds_one_dead_job_by_id_as_list_shows_it(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract", order_id="11")
        await _bury(subject, new_job("contract"))
        await enqueue(subject.queue, job)
        await subject.queue.retry_many([Retry(await receive_one(subject), timedelta(0))])
        await subject.queue.dead_letter_many(
            [Burial(await receive_one(subject), "PermanentJobError: gone")]
        )
        dead = await subject.dead_letters.get(job.id)
        assert dead is not None
        assert (dead.job, dead.attempts, dead.error) == (job, 2, "PermanentJobError: gone")
        assert dead in await subject.dead_letters.list()

    async def test_get_leaves_the_dead_job_dead_and_redrivable(self, subject: QueueSubject) -> None:
        job = new_job("contract")
        await _bury(subject, job)
        assert await subject.dead_letters.get(job.id) is not None
        assert await subject.dead_letters.count() == 1
        assert await subject.dead_letters.redrive(job.id) is True
        assert await subject.dead_letters.get(job.id) is None
        assert (await receive_one(subject)).job == job

    async def test_get_is_none_for_a_job_that_is_not_dead(self, subject: QueueSubject) -> None:
        live = new_job("contract")
        await enqueue(subject.queue, live)
        assert await subject.dead_letters.get(live.id) is None
        await receive_one(subject)
        assert await subject.dead_letters.get(live.id) is None
        assert await subject.dead_letters.get("no-such-job") is None

    async def test_redrive_one_sends_the_same_job_back_with_attempts_reset(
        self, subject: QueueSubject
    ) -> None:
        job = new_job("contract")
        await _bury(subject, job)
        assert await subject.dead_letters.redrive(job.id) is True
        assert await subject.dead_letters.redrive(job.id) is False
        again = await receive_one(subject)
        assert (again.job, again.attempts) == (job, 1)
        assert await subject.dead_letters.count() == 0

    async def test_a_redriven_job_starts_over_its_snoozes(self, subject: QueueSubject) -> None:
        job = new_job("contract")
        await enqueue(subject.queue, job)
        await subject.queue.retry_many(
            [Retry(await receive_one(subject), timedelta(0), snooze=True)]
        )
        snoozed = await receive_one(subject)
        assert snoozed.snoozes == 1
        await subject.queue.dead_letter_many([Burial(snoozed, "Snooze: too many")])
        assert await subject.dead_letters.redrive(job.id) is True
        again = await receive_one(subject)
        assert (again.job, again.attempts, again.snoozes) == (job, 1, 0)

    async def test_redrive_all_by_type_leaves_other_types_dead(self, subject: QueueSubject) -> None:
        keep, send = new_job("contract.keep"), new_job("contract.send")
        await _bury(subject, keep)
        await _bury(subject, send)
        assert await subject.dead_letters.redrive_all(job_type="contract.send") == 1
        assert (await receive_one(subject)).job == send
        assert [d.job for d in await subject.dead_letters.list()] == [keep]
        assert await subject.dead_letters.list(job_type="contract.send") == []

    async def test_purge_empties_the_dead_letters(self, subject: QueueSubject) -> None:
        await _bury(subject, new_job("contract"))
        await _bury(subject, new_job("contract"))
        assert await subject.dead_letters.purge() == 2
        assert await subject.dead_letters.count() == 0

    async def test_too_large_job_is_refused_before_sending(self, subject: QueueSubject) -> None:
        with pytest.raises(JobTooLarge):
            await enqueue(subject.queue, new_job("contract", blob="x" * (256 * 1024)))
        await assert_nothing(subject)


class QueueContract(
    DeliveryContract,
    SchedulingContract,
    NamedQueueContract,
    OpsContract,
    OutcomesContract,
    PriorityContract,
):
    """The whole contract: delivery, delays, unique keys, cancel, named queues, ops, the
    jobs finished lately and priorities."""


async def _stale_and_two_live(subject: QueueSubject) -> tuple[Message, Message, list[Message]]:
    """A stale receipt, the live delivery of its job (attempts 2), and two live first
    deliveries of other jobs. The live delivery's lease is extended to a minute: the tests
    assert that it holds, however slow the machine makes their next steps."""
    await enqueue(subject.queue, new_job("contract", n="0"))
    stale = await receive_one(subject)
    await sleep_past(subject.visibility, subject)
    live = await receive_one(subject)
    assert (live.job, live.attempts) == (stale.job, 2)
    await subject.queue.extend_many([live], timedelta(minutes=1))
    await enqueue(subject.queue, new_job("contract", n="1"))
    await enqueue(subject.queue, new_job("contract", n="2"))
    return stale, live, [await receive_one(subject), await receive_one(subject)]


async def _bury(subject: QueueSubject, job: Job) -> None:
    await enqueue(subject.queue, job)
    await subject.queue.dead_letter_many([Burial(await receive_one(subject), "contract: buried")])
