"""The W3C trace context of the current span, as job headers and back."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.context import Context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

# Explicit, not the global propagator: what a job carries does not depend on process setup.
_PROPAGATOR = TraceContextTextMapPropagator()


def current_headers() -> dict[str, str]:
    """`traceparent` (and `tracestate`) of the current span; {} outside any span."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier


def context_of(headers: Mapping[str, str]) -> Context:
    """The context whose parent is the span these headers name (an empty one if none)."""
    return _PROPAGATOR.extract(dict(headers))
