"""Tracing of a process, when SKINCARE_OTLP_ENDPOINT or SKINCARE_TRACE_DIR asks for it: built
from the `otel` extra,
which is imported only then (a process without tracing loads nothing of OpenTelemetry)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from skincare_core.jobs.tracing import HeaderSource, JobTracer
from skincare_core.log_context import bound_fields
from skincare_core.shop.ports import EmailService, InvoiceRenderer
from skincare_services.settings import Settings

if TYPE_CHECKING:
    from skincare_otel import Tracing


def process_tracing(settings: Settings, *, service: str) -> Tracing | None:
    """The process's tracing; None when not configured. Configured without the extra installed
    is a one-line error and exit status 2."""
    if not (settings.trace_dir or settings.otlp_endpoint):
        return None
    try:
        from skincare_otel import process_tracing as otel_tracing
    except ImportError:
        asked = "SKINCARE_OTLP_ENDPOINT" if settings.otlp_endpoint else "SKINCARE_TRACE_DIR"
        print(
            f"skincare-{service}: {asked} is set but the otel extra is not installed"
            " (install skincare-services[otel])",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    directory = Path(settings.trace_dir) if settings.trace_dir else None
    return otel_tracing(
        service=service, directory=directory, otlp_endpoint=settings.otlp_endpoint or None
    )


def job_headers(tracing: Tracing | None) -> HeaderSource:
    """What the outbox stamps on each job: the request id the current request's logs carry
    (the job's history names it) and, when tracing, the current trace context."""
    if tracing is None:
        return _request_id
    from skincare_otel import current_headers

    return partial(_traced, current_headers)


def _request_id() -> Mapping[str, str]:
    request = bound_fields().get("request_id")
    return {"request_id": request} if isinstance(request, str) else {}


def _traced(trace: HeaderSource) -> Mapping[str, str]:
    return {**trace(), **_request_id()}


def job_tracer(tracing: Tracing | None) -> JobTracer | None:
    """The worker's span per job (None: the engine's no-op)."""
    if tracing is None:
        return None
    from skincare_otel import OtelJobTracer

    return OtelJobTracer(tracing.tracer)


def traced_email(email: EmailService, tracing: Tracing | None) -> EmailService:
    """`email`, each send a child span of the job's when tracing."""
    if tracing is None:
        return email
    from skincare_otel import TracedEmailService

    return TracedEmailService(email, tracing.tracer)


def traced_renderer(renderer: InvoiceRenderer, tracing: Tracing | None) -> InvoiceRenderer:
    """`renderer`, each render a child span of the job's when tracing."""
    if tracing is None:
        return renderer
    from skincare_otel import TracedInvoiceRenderer

    return TracedInvoiceRenderer(renderer, tracing.tracer)
