"""JSON logs: one object per line with time, level, service, logger, message, the bound fields
and the record's fields; the CLI's go to stderr at WARNING or above."""

from __future__ import annotations

import contextvars
import json
import logging
import subprocess
import sys

from skincare_core.log_context import bind_fields
from skincare_services.logs import JsonFormatter


def _format(kind: str = "worker", **extra: object) -> dict[str, object]:
    record = logging.LogRecord(
        "skincare_core.jobs.worker", logging.INFO, __file__, 1, "job.done", (), None
    )
    record.__dict__.update(extra)
    line = JsonFormatter(kind).format(record)  # type: ignore[arg-type]
    assert "\n" not in line
    return dict(json.loads(line))


def test_fields_become_keys() -> None:
    entry = _format(job_id="j1", type="process_payment", attempts=2)
    assert entry["message"] == "job.done"
    assert entry["level"] == "INFO"
    assert entry["service"] == "worker"
    assert entry["logger"] == "skincare_core.jobs.worker"
    assert (entry["job_id"], entry["type"], entry["attempts"]) == ("j1", "process_payment", 2)
    assert "time" in entry


def test_bound_fields_are_on_the_line_and_the_record_s_own_win() -> None:
    def in_a_request() -> dict[str, object]:
        bind_fields(request_id="req-1", order_id=5)
        return _format("api", order_id=6)

    entry = contextvars.copy_context().run(in_a_request)
    assert (entry["service"], entry["request_id"], entry["order_id"]) == ("api", "req-1", 6)


def test_a_record_field_never_replaces_the_line_s_own_keys() -> None:
    entry = _format("worker", service="sqs", level="nope", aws_service="sqs")
    assert (entry["service"], entry["level"], entry["aws_service"]) == ("worker", "INFO", "sqs")


def test_secret_named_fields_are_masked() -> None:
    entry = _format(webhook_secret="s3cret", authorization="Bearer x")
    assert entry["webhook_secret"] == "***"
    assert entry["authorization"] == "***"


def test_uvicorn_s_coloured_copy_of_the_message_is_dropped() -> None:
    entry = _format(color_message="Started server process [\x1b[36m%d\x1b[0m]")
    assert "color_message" not in entry
    assert "\x1b" not in json.dumps(entry)


CLI_PROBE = """
import logging, sys
from skincare_services.logs import configure_logging
configure_logging("DEBUG", service="cli")
logging.getLogger("botocore.credentials").info("Found credentials in environment variables.")
logging.getLogger("skincare").warning("cli.warned")
print("the command's output")
"""


def test_the_cli_keeps_stdout_for_output_and_logs_warnings_to_stderr() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLI_PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == "the command's output\n"
    [line] = done.stderr.splitlines()
    assert json.loads(line) | {"time": None} == {
        "time": None,
        "level": "WARNING",
        "service": "cli",
        "logger": "skincare",
        "message": "cli.warned",
    }
