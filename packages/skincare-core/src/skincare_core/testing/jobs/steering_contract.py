"""The steering contract: what every backend's `Pauses` and `JobActions` promise. Subclass
`SteeringContract` and override `backend` to yield a fresh, empty backend serving the `default`
queue, with `pauses` and `actions` set, whose receive returns within a second or two when
nothing is there (and, where jobs wait in an outbox, with its relay running).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import anyio
import pytest

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.ports import Burial, Queue, Retry
from skincare_core.jobs.steering import WATCH_EVERY, JobActions, Pauses
from skincare_core.testing.jobs.scheduling_contract import jobs_from, receive_from

# Every worker holds a pause within this long (WATCH_EVERY, then one claim).
HELD_WITHIN = 1.0
_LATER = timedelta(hours=1)


def _pauses(backend: Backend) -> Pauses:
    assert backend.pauses is not None, "the backend must have pauses"
    return backend.pauses


def _actions(backend: Backend) -> JobActions:
    assert backend.actions is not None, "the backend must have job actions"
    return backend.actions


async def nothing_for(queue: Queue, seconds: float) -> None:
    """Receive from `queue` for `seconds`: nothing comes. A receive is never cut off (one
    cancelled mid-statement would leave its pooled connection checked out)."""
    deadline = anyio.current_time() + seconds
    while anyio.current_time() < deadline:
        assert await queue.receive(10) == []


async def _held(backend: Backend) -> None:
    # Let every view of the pauses catch up, as a worker's would.
    await anyio.sleep(HELD_WITHIN)


class SteeringContract:
    """Pauses hold on every claim until resumed; waiting jobs run now or are cancelled."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    async def backend(self) -> AsyncIterator[Backend]:
        """Override: yield a fresh backend serving `default`, with pauses and actions."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def test_pause_and_resume_say_whether_they_changed_anything(
        self, backend: Backend
    ) -> None:
        pauses = _pauses(backend)
        assert await pauses.pause(queue="default") is True
        assert await pauses.pause(queue="default") is False
        assert await pauses.pause(job_type="contract.held") is True
        paused = await pauses.paused()
        assert (paused.queues, paused.types) == (
            frozenset({"default"}),
            frozenset({"contract.held"}),
        )
        assert await pauses.resume(queue="default") is True
        assert await pauses.resume(queue="default") is False
        assert (await pauses.paused()).queues == frozenset()
        with pytest.raises(ValueError, match="either"):
            await pauses.pause(queue="default", job_type="contract.held")

    async def test_a_paused_queue_delivers_nothing_until_resumed(self, backend: Backend) -> None:
        queue, pauses = backend.queue(), _pauses(backend)
        await pauses.pause(queue="default")
        await _held(backend)
        job = new_job("contract.paused")
        await enqueue(queue, job)
        await nothing_for(queue, 2 * HELD_WITHIN)
        await pauses.resume(queue="default")
        assert await jobs_from(queue, 1) == [job]

    async def test_a_paused_type_waits_while_the_others_run(self, backend: Backend) -> None:
        queue, pauses = backend.queue(), _pauses(backend)
        await pauses.pause(job_type="contract.held")
        await _held(backend)
        held, other = new_job("contract.held"), new_job("contract.free")
        await enqueue(queue, held)
        await enqueue(queue, other)
        assert await jobs_from(queue, 1) == [other]
        await nothing_for(queue, 2 * HELD_WITHIN)
        await pauses.resume(job_type="contract.held")
        assert await jobs_from(queue, 1) == [held]

    async def test_a_running_job_finishes_under_a_pause(self, backend: Backend) -> None:
        queue, pauses = backend.queue(), _pauses(backend)
        await enqueue(queue, new_job("contract.running"))
        message = await receive_from(queue)
        await pauses.pause(queue="default")
        await queue.ack_many([message])
        await pauses.resume(queue="default")
        await nothing_for(queue, WATCH_EVERY)
        assert await _actions(backend).find(message.job.id) is None

    async def test_an_unknown_job_is_none_and_nothing_is_done_to_it(self, backend: Backend) -> None:
        actions = _actions(backend)
        for job_id in ("no-such-job", "'; DROP TABLE jobs; --", "é" * 300):
            assert await actions.find(job_id) is None
            assert await actions.run_now(job_id) is False
            assert await actions.cancel(job_id) is False

    async def test_a_scheduled_job_runs_now(self, backend: Backend) -> None:
        queue, actions = backend.queue(), _actions(backend)
        job = new_job("contract.later")
        await enqueue(queue, job, delay=_LATER)
        view = await actions.find(job.id)
        assert view is not None
        assert (view.job, view.queue, view.state, view.can_run_now) == (
            job,
            "default",
            "scheduled",
            True,
        )
        assert await actions.run_now(job.id) is True
        message = await receive_from(queue)
        assert message.job == job
        running = await actions.find(job.id)
        assert running is not None
        assert running.state == "running"
        assert await actions.run_now(job.id) is False
        assert await actions.cancel(job.id) is False
        await queue.ack_many([message])

    async def test_a_retrying_job_runs_now_where_the_backend_holds_it(
        self, backend: Backend
    ) -> None:
        queue, actions = backend.queue(), _actions(backend)
        await enqueue(queue, new_job("contract.retrying"))
        first = await receive_from(queue)
        await queue.retry_many([Retry(first, _LATER)])
        view = await actions.find(first.job.id)
        assert view is not None
        # A broker (SQS) holds a retried message itself: it cannot be moved, only cancelled.
        assert view.state in ("retrying", "queued")
        assert await actions.run_now(first.job.id) is (view.state == "retrying")
        if view.state == "retrying":
            again = await receive_from(queue)
            assert (again.job, again.attempts) == (first.job, 2)
            await queue.ack_many([again])

    async def test_a_waiting_job_is_cancelled_and_never_runs(self, backend: Backend) -> None:
        queue, actions = backend.queue(), _actions(backend)
        now, later = new_job("contract.cancel"), new_job("contract.cancel")
        await enqueue(queue, now)
        await enqueue(queue, later, delay=_LATER)
        for job in (now, later):
            view = await actions.find(job.id)
            assert view is not None
            assert view.can_cancel
            assert await actions.cancel(job.id) is True
            assert await actions.cancel(job.id) is False
        await nothing_for(queue, 2 * HELD_WITHIN)
        assert await actions.find(now.id) is None

    async def test_a_dead_job_is_seen_dead_and_left_to_the_dead_letters(
        self, backend: Backend
    ) -> None:
        queue, actions = backend.queue(), _actions(backend)
        job: Job = new_job("contract.dead")
        await enqueue(queue, job)
        await queue.dead_letter_many([Burial(await receive_from(queue), "contract: dead")])
        view = await actions.find(job.id)
        assert view is not None
        assert (view.state, view.can_run_now, view.can_cancel) == (
            "dead",
            False,
            False,
        )
        assert await actions.cancel(job.id) is False
        assert await backend.dead_letters.redrive(job.id) is True
        assert await jobs_from(queue, 1) == [job]
