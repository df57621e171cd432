"""Tracing with the SDK's in-memory exporter: a request's server span, the trace context a job
carries, the worker's job span continuing it, and the e-mail and PDF child spans."""

from __future__ import annotations

from datetime import UTC, date, datetime

import anyio
import pytest
from attrs import evolve
from litestar.testing import AsyncTestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Router
from skincare_core.shop.models import DailySales
from skincare_core.shop.ports import InvoiceData, OrderEmail, SalesSummaryEmail
from skincare_core.testing.shop import ManualClock, RecordingEmailService, TextInvoiceRenderer
from skincare_http import create_app
from skincare_otel import (
    OtelJobTracer,
    TracedEmailService,
    TracedInvoiceRenderer,
    current_headers,
    litestar_plugin,
)
from skincare_otel.setup import Tracing, in_memory
from tests.core.worker_kit import eventually, fast_queue, running, worker_on
from tests.http.http_support import (
    SETTINGS,
    FakeReadiness,
    MemoryBackend,
    bearer,
    seed_shop,
    services_for,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def exported() -> tuple[Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return in_memory(provider), exporter


def _named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    [span] = [s for s in spans if s.name == name]
    return span


async def test_a_request_gets_a_server_span_named_for_its_route(
    exported: tuple[Tracing, InMemorySpanExporter],
) -> None:
    tracing, exporter = exported
    backend = MemoryBackend()
    seed = await seed_shop(backend)
    services = services_for(backend.uow, ManualClock(), FakeReadiness())
    app = create_app(services=services, settings=SETTINGS, plugins=[litestar_plugin(tracing)])
    alice = bearer(seed.alice.id)
    async with AsyncTestClient(app) as client:
        await client.put(f"/v1/cart/items/{seed.serum.id}", json={"quantity": 1}, headers=alice)
        placed = await client.post("/v1/orders", headers={**alice, "Idempotency-Key": "t1"})
    assert placed.status_code == 201
    server = _named(exporter.get_finished_spans(), "POST /v1/orders")
    assert server.kind == SpanKind.SERVER


def test_headers_carry_the_current_span_and_nothing_outside_one(
    exported: tuple[Tracing, InMemorySpanExporter],
) -> None:
    tracing, _ = exported
    assert current_headers() == {}
    with tracing.tracer.start_as_current_span("request") as span:
        headers = current_headers()
    context = span.get_span_context()
    # version-trace id-parent id-flags (the flags vary with the SDK: sampled, random id).
    assert headers["traceparent"].startswith(f"00-{context.trace_id:032x}-{context.span_id:016x}-")


async def test_the_job_span_continues_the_enqueuers_trace_with_child_spans(
    exported: tuple[Tracing, InMemorySpanExporter],
) -> None:
    tracing, exporter = exported
    email = TracedEmailService(RecordingEmailService(), tracing.tracer)
    renderer = TracedInvoiceRenderer(TextInvoiceRenderer(), tracing.tracer)
    done = anyio.Event()

    async def confirm(job: Job) -> None:
        await email.send_order_confirmation("a@example.com", OrderEmail("ORD-1", (), 1, job.id))
        invoice = InvoiceData("ORD-1", datetime.now(UTC), "a@example.com", (), 1, paid=True)
        await anyio.to_thread.run_sync(renderer.render, invoice)
        done.set()

    router = Router()
    router.register("send_confirmation_email", confirm)
    queue = fast_queue()
    with tracing.tracer.start_as_current_span("POST /v1/orders") as request:
        await enqueue(queue, evolve(new_job("send_confirmation_email"), headers=current_headers()))
    async with running(worker_on(queue, router, tracer=OtelJobTracer(tracing.tracer))):
        await done.wait()
        await eventually(lambda: len(exporter.get_finished_spans()) == 4)
    spans = exporter.get_finished_spans()
    job = _named(spans, "send_confirmation_email")
    assert job.kind == SpanKind.CONSUMER
    assert job.parent is not None
    assert job.parent.span_id == request.get_span_context().span_id
    trace = request.get_span_context().trace_id
    for child in ("email.send", "invoice.render"):
        span = _named(spans, child)
        assert span.parent is not None
        assert span.parent.span_id == job.context.span_id
        assert span.context.trace_id == trace


async def test_a_sales_summary_send_is_a_client_span(
    exported: tuple[Tracing, InMemorySpanExporter],
) -> None:
    tracing, exporter = exported
    inner = RecordingEmailService()
    sales = DailySales(date(2026, 12, 3), 0, 0, ())
    await TracedEmailService(inner, tracing.tracer).send_sales_summary(
        "admin@example.com", SalesSummaryEmail(sales, "job-1")
    )
    [span] = exporter.get_finished_spans()
    assert (span.name, span.kind) == ("email.send", SpanKind.CLIENT)
    assert span.attributes == {"skincare.email.kind": "sales_summary"}
    assert [mail.to for mail in inner.summaries] == ["admin@example.com"]
