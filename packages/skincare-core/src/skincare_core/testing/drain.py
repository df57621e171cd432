"""`JobDrain`, an inline job runner for tests: the code under test enqueues on in-memory queues,
`drain()` runs every due job through the registered handlers under the worker's own retry rules
and says what became of each run; a manual clock reaches delayed jobs and retries.

It needs no pytest; `skincare_core.testing.pytest_plugin` exposes it as the `job_drain` fixture.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Literal

import anyio
from attrs import frozen

from skincare_core.jobs.definitions import Definitions
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.executor import Executor
from skincare_core.jobs.job import Job, Message
from skincare_core.jobs.ports import Burial, Retry, Settlement
from skincare_core.jobs.retry import RetryPolicies, RetryRule, backoff_delay
from skincare_core.jobs.router import Router
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_core.testing.clock import ManualClock
from skincare_core.testing.jobs.memory_backend import InMemoryQueues
from skincare_core.testing.jobs.memory_queue import InMemoryQueue

RunOutcome = Literal["done", "retried", "dead", "snoozed"]
MAX_RUNS = 10_000
"""How many runs one `drain()` makes before it calls the jobs a loop (a RuntimeError)."""


@frozen
class JobRun:
    """One run of a job by `JobDrain.drain`: its `attempt` (1 on the first), what became of it,
    the `error` (``"ValueError: out of stock"``) of a retried or dead run, and for a retried or
    snoozed one how long until it is due again (`again_in`)."""

    job: Job
    queue: str
    attempt: int
    outcome: RunOutcome
    error: str | None = None
    again_in: timedelta | None = None


class JobDrain:
    """In-memory named queues (`queues`, a sink, outbox sink and dead letters; `queue(name)`,
    an `InMemoryQueue`) that `drain()` empties of due jobs through `handlers`: a team's
    `Definitions` (with their retry policies and timeouts) or a `Router` (which may be set
    after the drain is made, for handlers that need its queues).

    Every run is settled as the worker settles it: done (acked), retried after the retry rule's
    delay (each type's policy, else `max_attempts` waiting `backoff`; the full jitter drawn
    from `Random(seed)`), snoozed (`Snooze(delay)`: due again after its delay, no attempt
    spent, at most `max_snoozes` times), dead (a permanent error such as arguments that do not
    fit, the last attempt, a snooze past the bound). A run past its
    type's timeout (else `job_timeout`) fails with a TimeoutError. Time stands still until
    `advance` moves `clock` (its `now()` is the queues' wall clock, so a job delayed by an hour
    is due once an hour has been advanced).
    """

    def __init__(
        self,
        handlers: Router | Definitions,
        *,
        clock: ManualClock | None = None,
        max_attempts: int = 5,
        backoff: Callable[[int], timedelta] = backoff_delay,
        retry_policies: RetryPolicies | None = None,
        job_timeout: timedelta = timedelta(minutes=5),
        max_snoozes: int = 25,
        seed: int = 0,
    ) -> None:
        self.clock = ManualClock() if clock is None else clock
        self._epoch = self.clock.now()
        self.queues = InMemoryQueues(
            wait=timedelta(0), monotonic=self._seconds, wall_clock=self.clock.now
        )
        self._timeouts: dict[str, timedelta] = {}
        policies = dict(retry_policies or {})
        if isinstance(handlers, Definitions):
            policies = {**handlers.retry_policies, **policies}
            self._timeouts = dict(handlers.timeouts)
            handlers = handlers.router()
        self.handlers = handlers
        self._rule = RetryRule(
            max_attempts=max_attempts,
            backoff=backoff,
            policies=policies,
            rng=random.Random(seed),
        )
        self._timeout = job_timeout
        self._max_snoozes = max_snoozes
        self._executors: dict[str, Executor] = {}

    def queue(self, name: str = DEFAULT_QUEUE) -> InMemoryQueue:
        """The named queue `name` (made on first use)."""
        return self.queues.queue(name)

    async def enqueue(self, envelope: Envelope) -> bool:
        """Add the envelope's job to its queue; False while a live job holds its unique key."""
        return await self.queues.enqueue_many([envelope]) == 1

    def now(self) -> datetime:
        """The drain's time."""
        return self.clock.now()

    def advance(self, by: timedelta) -> None:
        """Move time forward by `by`: delayed jobs and retries due by then become due."""
        self.clock.advance(by)

    async def drain(self, queue: str | None = None) -> list[JobRun]:
        """Run every due job of every queue (or of `queue`), and the jobs those enqueue while
        due, until none is due now; each run in the order it happened. A retry or snooze due
        later waits for `advance`."""
        runs: list[JobRun] = []
        while batch := await self._receive(queue):
            for served, message in batch:
                runs.append(await self._run(served, message))
            if len(runs) > MAX_RUNS:
                raise RuntimeError(f"drain ran {len(runs)} jobs: a job keeps enqueueing itself")
        return runs

    async def _receive(self, only: str | None) -> list[tuple[InMemoryQueue, Message]]:
        served = self.queues.every if only is None else [self.queue(only)]
        return [(queue, message) for queue in served for message in await queue.receive(100)]

    async def _run(self, queue: InMemoryQueue, message: Message) -> JobRun:
        executor = self._executor(queue.name)
        error: Exception | None = None
        timeout = executor.timeout_of(message.job.type)
        with anyio.move_on_after(timeout) as scope:
            try:
                await self.handlers.dispatch(message.job)
            except Exception as exc:
                error = exc
        if scope.cancelled_caught:
            error = TimeoutError(f"ran longer than the job timeout of {timeout:g} s")
        settlement: Settlement = message if error is None else executor.failed(message, error)
        await _settle(queue, settlement)
        return _run_of(queue.name, message, settlement, error)

    def _executor(self, queue: str) -> Executor:
        if queue not in self._executors:
            self._executors[queue] = Executor(
                queue=queue,
                router=self.handlers,
                retry=self._rule,
                job_timeout=self._timeout.total_seconds(),
                job_timeouts={t: d.total_seconds() for t, d in self._timeouts.items()},
                max_snoozes=self._max_snoozes,
            )
        return self._executors[queue]

    def _seconds(self) -> float:
        return (self.clock.now() - self._epoch).total_seconds()


async def _settle(queue: InMemoryQueue, settlement: Settlement) -> None:
    if isinstance(settlement, Retry):
        await queue.retry_many([settlement])
    elif isinstance(settlement, Burial):
        await queue.dead_letter_many([settlement])
    else:
        await queue.ack_many([settlement])


def _run_of(
    queue: str, message: Message, settlement: Settlement, error: Exception | None
) -> JobRun:
    run = JobRun(message.job, queue, message.attempts, "done")
    if isinstance(settlement, Burial):
        return JobRun(run.job, queue, run.attempt, "dead", settlement.reason)
    if isinstance(settlement, Retry) and settlement.snooze:
        return JobRun(run.job, queue, run.attempt, "snoozed", None, settlement.delay)
    if isinstance(settlement, Retry):
        text = None if error is None else f"{type(error).__name__}: {error}"
        return JobRun(run.job, queue, run.attempt, "retried", text, settlement.delay)
    return run
