"""A process's tracer (spans to an OTLP collector, or as JSON lines in a file per service) and
the API's plugin."""

from __future__ import annotations

from pathlib import Path

from attrs import frozen
from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from opentelemetry.trace import Tracer


@frozen
class Tracing:
    """The provider a process exports through, and its tracer."""

    provider: TracerProvider
    tracer: Tracer


def process_tracing(
    *, service: str, directory: Path | None = None, otlp_endpoint: str | None = None
) -> Tracing:
    """The tracing of process `service` (named skincare-<service> in its spans), exporting to
    each destination given: an OTLP/HTTP collector at `otlp_endpoint` (its base URL; spans
    are batched, sent from a thread of the SDK's and flushed at exit), and
    directory/<service>.jsonl, one JSON object a line as each span ends (local runs, tests)."""
    provider = TracerProvider(resource=Resource.create({"service.name": f"skincare-{service}"}))
    if otlp_endpoint:
        # Imported here: a process tracing to a file does not load the HTTP exporter.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = otlp_endpoint.rstrip("/") + "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        stream = (directory / f"{service}.jsonl").open("a", encoding="utf-8", buffering=1)
        exporter = ConsoleSpanExporter(out=stream, formatter=_one_line)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider, provider.get_tracer("skincare"))


def file_tracing(directory: Path, *, service: str) -> Tracing:
    """Spans of `service` appended to directory/<service>.jsonl only."""
    return process_tracing(service=service, directory=directory)


def in_memory(provider: TracerProvider) -> Tracing:
    """A Tracing on a provider the caller set up (tests add the SDK's in-memory exporter)."""
    return Tracing(provider, provider.get_tracer("skincare"))


def litestar_plugin(tracing: Tracing) -> OpenTelemetryPlugin:
    """Litestar's plugin: a server span per request, named for its method and route."""
    return OpenTelemetryPlugin(OpenTelemetryConfig(tracer_provider=tracing.provider))


def _one_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"
