"""The executor: runs one job and says what becomes of it (the message when done, a `Retry`, a
`Burial`), reporting each job to the metrics; it never touches the queue."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from skincare_core.jobs.errors import InvalidJob, RetryLater
from skincare_core.jobs.executor import Executor
from skincare_core.jobs.job import Job, Message, new_job
from skincare_core.jobs.metrics import NoMetrics, Outcome
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.jobs.retry import RetryPolicy, RetryRule
from skincare_core.jobs.router import Router
from tests.log_records import fields

pytestmark = pytest.mark.anyio
BACKOFF = timedelta(seconds=7)


class Recorded(NoMetrics):
    """Metrics that keep each start's pickup latency and each job's outcome."""

    def __init__(self) -> None:
        self.latencies: list[float | None] = []
        self.outcomes: list[Outcome] = []

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        self.latencies.append(pickup_latency)

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        self.outcomes.append(outcome)


def executor_of(handler: object, **policies: RetryPolicy) -> tuple[Executor, Recorded]:
    router, metrics = Router(), Recorded()
    router.register("work", handler)  # type: ignore[arg-type]
    rule = RetryRule(max_attempts=3, backoff=lambda _attempts: BACKOFF, policies=policies)
    executor = Executor(
        queue="default", router=router, retry=rule, job_timeout=2.0, metrics=metrics
    )
    return executor, metrics


def delivery(attempts: int = 1, enqueued_at: datetime | None = None) -> Message:
    return Message("receipt", new_job("work", order_id="1"), attempts, enqueued_at)


def raising(error: Exception) -> object:
    async def handler(job: Job) -> None:
        raise error

    return handler


async def ok(job: Job) -> None:
    """Succeeds."""


async def test_a_job_that_succeeds_is_its_own_message_done(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "skincare_core.jobs.worker")
    executor, metrics = executor_of(ok)
    message = delivery(enqueued_at=datetime.now(UTC) - timedelta(seconds=3))
    assert await executor.run(message) is message
    assert metrics.outcomes == ["done"]
    [latency] = metrics.latencies
    assert latency is not None
    assert 3.0 <= latency < 10.0
    [done] = [r for r in caplog.records if r.message == "job.done"]
    assert fields(done, "job_id", "attempts") == (message.job.id, 1)


async def test_a_failure_is_retried_after_the_rule_s_delay() -> None:
    executor, metrics = executor_of(raising(ConnectionError("down")))
    message = delivery(attempts=2)
    assert await executor.run(message) == Retry(message, BACKOFF)
    assert (metrics.latencies, metrics.outcomes) == ([None], ["retried"])


async def test_retry_later_replaces_the_delay() -> None:
    executor, _ = executor_of(raising(RetryLater(timedelta(seconds=30), "429")))
    message = delivery()
    assert await executor.run(message) == Retry(message, timedelta(seconds=30))


@pytest.mark.parametrize(
    ("error", "attempts", "reason"),
    [
        (InvalidJob("no order"), 1, "InvalidJob: no order"),
        (ConnectionError("down"), 3, "ConnectionError: down"),
        (RetryLater(timedelta(0), "429"), 3, "RetryLater: 429"),
    ],
    ids=["permanent", "last-attempt", "retry-later-on-the-last"],
)
async def test_a_permanent_error_or_the_last_attempt_is_dead_lettered(
    error: Exception, attempts: int, reason: str
) -> None:
    executor, metrics = executor_of(raising(error))
    message = delivery(attempts)
    assert await executor.run(message) == Burial(message, reason)
    assert metrics.outcomes == ["dead_lettered"]


async def test_a_type_s_policy_sets_its_attempts_and_delays() -> None:
    policy = RetryPolicy(attempts=5, base=timedelta(seconds=1), cap=timedelta(seconds=3))
    executor, _ = executor_of(raising(ConnectionError("down")), work=policy)
    fourth = delivery(attempts=4)
    settlement = await executor.run(fourth)
    assert isinstance(settlement, Retry)
    assert timedelta(0) <= settlement.delay <= timedelta(seconds=3)
    fifth = delivery(attempts=5)
    assert await executor.run(fifth) == Burial(fifth, "ConnectionError: down")


async def test_a_job_whose_deliveries_crashed_is_dead_lettered_without_running() -> None:
    calls: list[Job] = []

    async def handler(job: Job) -> None:
        calls.append(job)

    executor, metrics = executor_of(handler)
    message = delivery(attempts=4)
    reason = "crashed: 3 deliveries never finished"
    assert await executor.run(message) == Burial(message, reason)
    assert (calls, metrics.latencies, metrics.outcomes) == ([], [None], ["dead_lettered"])


async def test_a_cancellation_passes_through_and_reports_nothing_yet() -> None:
    async def hangs(job: Job) -> None:
        await anyio.sleep(10)

    executor, metrics = executor_of(hangs)
    with anyio.move_on_after(0.05) as scope:
        await executor.run(delivery())
    assert scope.cancelled_caught
    assert (len(metrics.latencies), metrics.outcomes) == (1, [])


def test_a_job_stopped_past_its_timeout_fails_its_attempt() -> None:
    executor, metrics = executor_of(ok)
    first, last = delivery(1), delivery(3)
    error = "TimeoutError: ran longer than the job timeout of 2 s"
    assert executor.interrupted(first, timed_out=True, ran=2.0) == Retry(first, BACKOFF)
    assert executor.interrupted(last, timed_out=True, ran=2.0) == Burial(last, error)
    assert metrics.outcomes == ["retried", "dead_lettered"]


def test_a_job_stopped_at_shutdown_runs_again_at_once() -> None:
    executor, metrics = executor_of(ok)
    message = delivery(3)
    assert executor.interrupted(message, timed_out=False, ran=1.0) == Retry(message, timedelta(0))
    assert metrics.outcomes == ["cancelled"]
