"""Runs one delivered job and says what becomes of it: acked, retried or dead-lettered."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from skincare_core.jobs.errors import PermanentJobError, RetryLater, Snooze
from skincare_core.jobs.job import Message, job_fields
from skincare_core.jobs.metrics import JobMetrics, NoMetrics, Outcome
from skincare_core.jobs.ports import Burial, Retry, Settlement
from skincare_core.jobs.retry import RetryRule
from skincare_core.jobs.router import Router
from skincare_core.jobs.tracing import JobTracer, NoTracer

logger = logging.getLogger("skincare_core.jobs.worker")


class Executor:
    """Routes a job to its handler inside a tracer span, reports it to the metrics and turns
    what happened into its `Settlement`: the message itself when done, a `Retry` after the
    retry rule's delay, or a `Burial` for a permanent error or the last attempt.

    It never talks to the queue: the worker hands each settlement to its completer.
    """

    def __init__(
        self,
        *,
        queue: str,
        router: Router,
        retry: RetryRule,
        job_timeout: float,
        job_timeouts: Mapping[str, float] | None = None,
        max_snoozes: int = 25,
        metrics: JobMetrics | None = None,
        tracer: JobTracer | None = None,
    ) -> None:
        self._queue = queue
        self._router = router
        self._retry = retry
        self._job_timeout = job_timeout
        self._job_timeouts = dict(job_timeouts or {})
        self._max_snoozes = max_snoozes
        self._metrics = metrics or NoMetrics()
        self._tracer = tracer or NoTracer()

    def timeout_of(self, job_type: str) -> float:
        """Seconds a job of `job_type` may run: its own timeout, else the worker's."""
        return self._job_timeouts.get(job_type, self._job_timeout)

    @property
    def shortest_timeout(self) -> float:
        """The shortest timeout any job may have: no job starting later ends its time sooner."""
        return min([self._job_timeout, *self._job_timeouts.values()])

    async def run(self, message: Message) -> Settlement:
        """Run the job of `message`; what becomes of it. A cancellation passes through: the
        worker that cancelled it asks `interrupted` what becomes of the job then."""
        job = message.job
        if message.attempts > self._retry.attempts(job.type):
            return self._crashed(message)
        self._metrics.started(self._queue, job.type, _waited(message))
        started = time.perf_counter()
        settlement: Settlement
        try:
            with self._tracer.job_span(job):
                await self._router.dispatch(job)
        except Exception as exc:
            settlement = self.failed(message, exc)
        else:
            settlement = message
            if logger.isEnabledFor(logging.INFO):
                logger.info("job.done", extra=job_fields(message))
        self._finished(message, _outcome(settlement), time.perf_counter() - started)
        return settlement

    def interrupted(self, message: Message, *, timed_out: bool, ran: float) -> Settlement:
        """What becomes of a job the worker stopped after `ran` seconds: past its type's
        timeout it failed (the attempt counts); stopped at shutdown it runs again at once."""
        if timed_out:
            limit = self.timeout_of(message.job.type)
            timeout = TimeoutError(f"ran longer than the job timeout of {limit:g} s")
            settlement = self.failed(message, timeout)
            self._finished(message, _outcome(settlement), ran)
            return settlement
        logger.warning("job.cancelled", extra=job_fields(message, delay=0.0))
        self._finished(message, "cancelled", ran)
        return Retry(message, timedelta(0), "stopped: the worker shut down")

    def failed(self, message: Message, exc: Exception) -> Retry | Burial:
        """Dead-letter a permanent error or the last attempt; otherwise retry after a delay.
        A snooze runs again after its delay, no attempt spent, while it is within the bound."""
        if isinstance(exc, Snooze):
            return self._snoozed(message, exc)
        error = f"{type(exc).__name__}: {exc}"
        # RetryLater only replaces the delay; it still counts toward the attempts.
        if isinstance(exc, PermanentJobError) or message.attempts >= self._retry.attempts(
            message.job.type
        ):
            return _burial(message, error)
        delay = exc.delay if isinstance(exc, RetryLater) else self._retry.delay(message)
        logger.warning(
            "job.retry", extra=job_fields(message, delay=delay.total_seconds(), error=error)
        )
        return Retry(message, delay, error)

    def _snoozed(self, message: Message, snooze: Snooze) -> Retry | Burial:
        if message.snoozes >= self._max_snoozes:
            reason = f"Snooze: snoozed {message.snoozes} times, the most a job may ({snooze})"
            return _burial(message, reason)
        delay = snooze.delay.total_seconds()
        logger.info("job.snoozed", extra=job_fields(message, delay=delay, snoozes=message.snoozes))
        return Retry(message, snooze.delay, snooze=True)

    def _crashed(self, message: Message) -> Burial:
        # Every earlier delivery ended without a settlement: the job kills its worker.
        self._metrics.started(self._queue, message.job.type, None)
        burial = _burial(message, f"crashed: {message.attempts - 1} deliveries never finished")
        self._finished(message, "dead_lettered", 0.0)
        return burial

    def _finished(self, message: Message, outcome: Outcome, duration: float) -> None:
        self._metrics.finished(self._queue, message.job.type, outcome, duration)


def _burial(message: Message, reason: str) -> Burial:
    logger.error("job.dead_lettered", extra=job_fields(message, error=reason))
    return Burial(message, reason)


def _outcome(settlement: Settlement) -> Outcome:
    if isinstance(settlement, Retry):
        return "retried"
    return "dead_lettered" if isinstance(settlement, Burial) else "done"


def _waited(message: Message) -> float | None:
    # A redelivery's wait includes its backoff or a lost lease: only first deliveries count.
    if message.enqueued_at is None or message.attempts != 1:
        return None
    return max((datetime.now(UTC) - message.enqueued_at).total_seconds(), 0.0)
