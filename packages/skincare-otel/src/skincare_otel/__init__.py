"""OpenTelemetry tracing for the skincare processes, an optional extra.

`process_tracing` builds a process's tracer (to an OTLP collector, a file or both;
`file_tracing` to a file); `current_headers` is the outbox's `HeaderSource` (the trace context
stored with every job enqueued); `OtelJobTracer` is the worker's `JobTracer` (a job's span
continues that context); `TracedEmailService` and `TracedInvoiceRenderer` make the e-mail send
and the PDF render child spans of the job's; `litestar_plugin` gives each request its server
span. Nothing here is imported unless tracing is configured.
"""

from skincare_otel.adapters import TracedEmailService, TracedInvoiceRenderer
from skincare_otel.jobs import OtelJobTracer
from skincare_otel.propagation import current_headers
from skincare_otel.setup import Tracing, file_tracing, litestar_plugin, process_tracing

__all__ = [
    "OtelJobTracer",
    "TracedEmailService",
    "TracedInvoiceRenderer",
    "Tracing",
    "current_headers",
    "file_tracing",
    "litestar_plugin",
    "process_tracing",
]
