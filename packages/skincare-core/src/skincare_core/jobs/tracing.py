"""The worker's tracing port: a span around each job, continuing the trace its headers carry.

Core imports no tracing library: an adapter (skincare-otel) implements `JobTracer`; without one
the worker uses `NoTracer`, whose span is a shared no-op context manager.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from skincare_core.jobs.job import Job

_NO_SPAN: AbstractContextManager[None] = nullcontext()
HeaderSource = Callable[[], Mapping[str, str]]
"""What an outbox asks for the headers of the job it adds: the current trace context ({}: none)."""


class JobTracer(Protocol):
    """Opens the span a job's handler runs in."""

    def job_span(self, job: Job) -> AbstractContextManager[object]:
        """A context manager around the handler: a span whose parent is in `job.headers`."""


class NoTracer:
    """No tracing: every job's span is the same no-op."""

    def job_span(self, job: Job) -> AbstractContextManager[object]:
        """The no-op span."""
        return _NO_SPAN
