"""The worker's `JobTracer` on OpenTelemetry: each job's span continues its enqueuer's trace."""

from __future__ import annotations

from contextlib import AbstractContextManager

from opentelemetry.trace import SpanKind, Tracer

from skincare_core.jobs.job import Job
from skincare_otel.propagation import context_of


class OtelJobTracer:
    """A consumer span named for the job's type, child of the span in the job's headers."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def job_span(self, job: Job) -> AbstractContextManager[object]:
        """The span the handler runs in; an error the handler raises is recorded on it."""
        return self._tracer.start_as_current_span(
            job.type,
            context=context_of(job.headers),
            kind=SpanKind.CONSUMER,
            attributes={"messaging.message.id": job.id, "skincare.job.type": job.type},
        )
