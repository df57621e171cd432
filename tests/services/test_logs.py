"""JSON logs: one object per line with time, level, logger, message and the record's fields."""

import json
import logging

from skincare_services.logs import JsonFormatter


def _format(**extra: object) -> dict[str, object]:
    record = logging.LogRecord(
        "skincare_core.jobs.worker", logging.INFO, __file__, 1, "job.done", (), None
    )
    record.__dict__.update(extra)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    return dict(json.loads(line))


def test_fields_become_keys() -> None:
    entry = _format(job_id="j1", type="process_payment", attempts=2)
    assert entry["message"] == "job.done"
    assert entry["level"] == "INFO"
    assert entry["logger"] == "skincare_core.jobs.worker"
    assert (entry["job_id"], entry["type"], entry["attempts"]) == ("j1", "process_payment", 2)
    assert "time" in entry


def test_secret_named_fields_are_masked() -> None:
    entry = _format(webhook_secret="s3cret", authorization="Bearer x")
    assert entry["webhook_secret"] == "***"
    assert entry["authorization"] == "***"
