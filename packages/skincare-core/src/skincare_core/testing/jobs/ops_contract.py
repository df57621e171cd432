"""The ops contract: the OpsService behaves alike on every backend's ports, run inside
`QueueContract` (dead letters grouped by error, a group's redrive previewed and done, purge)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.ops import OpsService, QueueRow, Selection
from skincare_core.jobs.outcomes import OutcomeCounts
from skincare_core.jobs.ports import Burial, QueueCounts

if TYPE_CHECKING:
    # contract.py imports this module: the subject's class is needed for type checking only.
    from skincare_core.testing.jobs.contract import QueueSubject


async def _kill(subject: QueueSubject, job: Job, error: str) -> None:
    await enqueue(subject.queue, job)
    with anyio.fail_after(10):
        while not (messages := await subject.queue.receive(1)):
            pass
    await subject.queue.dead_letter_many([Burial(messages[0], error)])


def _ops(subject: QueueSubject) -> OpsService:
    names = tuple(q.name for q in (subject.queue, subject.other) if q is not None)
    return OpsService(
        dead_letters=subject.dead_letters,
        stats=subject.stats,
        queue_names=names,
        outcomes=subject.outcomes,
    )


class OpsContract:
    """What the ops page shows and does, through the DeadLetters, QueueStats and JobOutcomes
    ports."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def subject(self) -> AsyncIterator[QueueSubject]:
        """Override: yield a QueueSubject on a fresh empty queue."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_ops_groups_by_error_and_redrives_one_group(self, subject: QueueSubject) -> None:
        poison = [new_job("contract-poison"), new_job("contract-poison")]
        other = new_job("contract-other")
        for job in poison:
            await _kill(subject, job, "ValueError: poison")
        await _kill(subject, other, "TimeoutError")
        ops = _ops(subject)
        view = await ops.overview()
        assert {g.error: len(g.jobs) for g in view.groups} == {
            "ValueError: poison": 2,
            "TimeoutError": 1,
        }
        assert view.totals.dead == 3
        assert view.queues[0] == QueueRow(
            subject.queue.name, QueueCounts(0, 0, 0, 3, None), OutcomeCounts(done=0, failed=3)
        )
        group = Selection(error="ValueError: poison")
        assert {d.job.id for d in await ops.preview(group)} == {j.id for j in poison}
        assert await ops.redrive(group) == 2
        assert [d.job for d in await subject.dead_letters.list()] == [other]

    async def test_ops_counts_each_named_queue_on_its_own_row(self, subject: QueueSubject) -> None:
        other = subject.other
        assert other is not None, "the ops contract's subject needs `other`"
        await enqueue(other, new_job("contract-waiting"))
        await enqueue(subject.queue, new_job("contract-done"))
        with anyio.fail_after(10):
            while not (messages := await subject.queue.receive(1)):
                pass
        await subject.queue.ack_many([messages[0]])
        rows = {row.name: row for row in (await _ops(subject).overview()).queues}
        assert rows[other.name].counts.ready == 1
        assert rows[other.name].finished == OutcomeCounts(done=0, failed=0)
        assert rows[subject.queue.name].counts.ready == 0
        assert rows[subject.queue.name].finished == OutcomeCounts(done=1, failed=0)

    async def test_ops_redrives_one_job_and_purges_the_rest(self, subject: QueueSubject) -> None:
        first, second = new_job("contract-a"), new_job("contract-b")
        await _kill(subject, first, "boom")
        await _kill(subject, second, "boom")
        ops = _ops(subject)
        assert [d.job for d in await ops.preview(Selection(job_id=first.id))] == [first]
        assert await ops.redrive(Selection(job_id=first.id)) == 1
        assert await ops.dead_job(first.id) is None
        assert await ops.purge() == 1
        assert (await ops.overview()).groups == ()
