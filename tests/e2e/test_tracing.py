"""One trace across the real processes: the API's `POST /v1/orders` server span, the worker's
`send_confirmation_email` job span under it, and the e-mail send under that; and a process
without tracing configured imports nothing of OpenTelemetry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skincare_services.local import stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import api_process, base_env, maildir_count, worker_process
from tests.e2e.otlp_receiver import otlp_receiver

pytestmark = pytest.mark.slow
Span = dict[str, object]


def _spans(path: Path) -> list[Span]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def _context(span: Span) -> dict[str, str]:
    context = span["context"]
    assert isinstance(context, dict)
    return context


def _one(spans: list[Span], name: str) -> Span:
    [span] = [s for s in spans if s["name"] == name]
    return span


def test_a_checkout_and_its_confirmation_email_are_one_trace(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    traces = home / "traces"
    env, port = base_env(database_url, home, SKINCARE_TRACE_DIR=str(traces))
    worker = worker_process(env, home)
    try:
        with api_process(env, port, home) as client:
            client.checkout(shop.user_ids[0], shop.product_ids[0], key="traced-1")
            assert wait_for(lambda: maildir_count(home) == 1, 30)
            confirmation = "send_confirmation_email"
            assert wait_for(lambda: confirmation in str(_spans(traces / "worker.jsonl")), 10)
    finally:
        assert stop_process(worker) == 0
    request = _one(_spans(traces / "api.jsonl"), "POST /v1/orders")
    worker_spans = _spans(traces / "worker.jsonl")
    job = _one(worker_spans, confirmation)
    send = _one(worker_spans, "email.send")
    trace_id = _context(request)["trace_id"]
    assert _context(job)["trace_id"] == _context(send)["trace_id"] == trace_id
    # The job's parent is a span of the request (the handler's, inside the server span).
    api_span_ids = {_context(s)["span_id"] for s in _spans(traces / "api.jsonl")}
    assert job["parent_id"] in api_span_ids
    assert send["parent_id"] == _context(job)["span_id"]


def test_a_checkout_traced_to_an_otlp_collector_arrives_as_one_trace(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    with otlp_receiver() as (endpoint, received):
        # The SDK's batch processor sends at a short interval here, not at its default.
        env, port = base_env(
            database_url, home, SKINCARE_OTLP_ENDPOINT=endpoint, OTEL_BSP_SCHEDULE_DELAY="100"
        )
        worker = worker_process(env, home)
        try:
            with api_process(env, port, home) as client:
                client.checkout(shop.user_ids[0], shop.product_ids[0], key="otlp-1")
                assert wait_for(lambda: maildir_count(home) == 1, 30)
                assert wait_for(lambda: "email.send" in {s.name for s in received}, 10)
        finally:
            assert stop_process(worker) == 0
        spans = list(received)
    [request] = [s for s in spans if s.name == "POST /v1/orders"]
    [job] = [s for s in spans if s.name == "send_confirmation_email"]
    [send] = [s for s in spans if s.name == "email.send"]
    assert (request.service, job.service, send.service) == (
        "skincare-api",
        "skincare-worker",
        "skincare-worker",
    )
    assert request.trace_id == job.trace_id == send.trace_id
    api_span_ids = {s.span_id for s in spans if s.service == "skincare-api"}
    assert job.parent_id in api_span_ids
    assert send.parent_id == job.span_id


# Makes `opentelemetry` unimportable, as it is where the otel extra is not installed.
_WITHOUT_THE_EXTRA = """
import sys
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError(f"No module named {name!r}")
sys.meta_path.insert(0, NotInstalled())
"""
_BUILD_PROCESSES = """
import sys
from skincare_services.compose import api_app, shop_definitions
from skincare_services.settings import load_settings
from skincare_postgres import PostgresDatabase, create_engine
settings = load_settings({
    "SKINCARE_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
    "SKINCARE_JWT_SECRET": "x" * 32, "SKINCARE_WEBHOOK_SECRET": "y", **EXTRA,
})
if BUILD_API:
    api_app(settings=settings)
shop_definitions(settings=settings, uow=PostgresDatabase(create_engine(settings.database_url)))
print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
"""


def _build(
    *, extra: dict[str, str], api: bool, installed: bool
) -> subprocess.CompletedProcess[str]:
    setup = f"EXTRA = {extra!r}\nBUILD_API = {api!r}\n"
    code = ("" if installed else _WITHOUT_THE_EXTRA) + setup + _BUILD_PROCESSES
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_without_the_extra_both_processes_build_and_import_nothing_of_it() -> None:
    result = _build(extra={}, api=True, installed=False)
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


def test_a_worker_without_tracing_configured_imports_nothing_of_it() -> None:
    # (Litestar itself imports the OpenTelemetry plugin whenever it is installed: the API
    # process cannot be held to this, only to the test above.)
    result = _build(extra={}, api=False, installed=True)
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [("SKINCARE_TRACE_DIR", "/tmp/none"), ("SKINCARE_OTLP_ENDPOINT", "http://127.0.0.1:9")],
)
def test_tracing_configured_without_the_extra_is_a_one_line_error(name: str, value: str) -> None:
    result = _build(extra={name: value}, api=True, installed=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"skincare-api: {name} is set but the otel extra is not installed"
        " (install skincare-services[otel])"
    ]
