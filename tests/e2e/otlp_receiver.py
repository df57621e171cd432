"""A local OTLP/HTTP trace receiver: what an OpenTelemetry collector would get, decoded."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from attrs import frozen
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@frozen
class ReceivedSpan:
    """One span as exported: its process, name and ids (hex, parent "" for a root)."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str


def _decoded(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest.FromString(body)
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            spans.extend(
                ReceivedSpan(
                    attributes.get("service.name", ""),
                    span.name,
                    span.trace_id.hex(),
                    span.span_id.hex(),
                    span.parent_span_id.hex(),
                )
                for span in scope_spans.spans
            )
    return spans


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, list[ReceivedSpan]]]:
    """A receiver on a free 127.0.0.1 port: its base URL and the spans it got so far."""
    received: list[ReceivedSpan] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/v1/traces":
                received.extend(_decoded(body))
            self.send_response(200 if self.path == "/v1/traces" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the test reads what was received, not the access log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
