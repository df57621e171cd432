"""A process's tracer: spans as JSON lines in a file per service, and the API's plugin."""

from __future__ import annotations

from pathlib import Path

from attrs import frozen
from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.trace import Tracer


@frozen
class Tracing:
    """The provider a process exports through, and its tracer."""

    provider: TracerProvider
    tracer: Tracer


def file_tracing(directory: Path, *, service: str) -> Tracing:
    """Spans of `service` appended to directory/<service>.jsonl, one JSON object a line, as
    each span ends (for local runs and tests; production exports with its own processor)."""
    directory.mkdir(parents=True, exist_ok=True)
    stream = (directory / f"{service}.jsonl").open("a", encoding="utf-8", buffering=1)
    provider = TracerProvider(resource=Resource.create({"service.name": f"skincare-{service}"}))
    exporter = ConsoleSpanExporter(out=stream, formatter=_one_line)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider, provider.get_tracer("skincare"))


def in_memory(provider: TracerProvider) -> Tracing:
    """A Tracing on a provider the caller set up (tests add the SDK's in-memory exporter)."""
    return Tracing(provider, provider.get_tracer("skincare"))


def litestar_plugin(tracing: Tracing) -> OpenTelemetryPlugin:
    """Litestar's plugin: a server span per request, named for its method and route."""
    return OpenTelemetryPlugin(OpenTelemetryConfig(tracer_provider=tracing.provider))


def _one_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"
