"""JSON logs, one object per line: time, level, service, logger, message, the fields bound to
the current request or job (request id; job id, type, attempts, order id), the record's fields.

The standard library's logging with contextvars (`skincare_core.log_context`), not structlog:
- uvicorn, Litestar, SQLAlchemy and botocore all log through the standard library; one handler
  formats their lines and ours alike, with no bridge between two logging systems;
- core binds a job's fields with one ContextVar, under half a microsecond per job, and needs no
  logging dependency; the fields are merged only into lines that are actually written;
- the code already logs with fields (`logger.info("job.done", extra=...)`), which stays as it is.

Services configure logging; libraries never do. The API and the worker write to stdout; the
CLI keeps stdout for its output and writes its logs to stderr, at WARNING or above.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Literal

from skincare_core.log_context import bound_fields

Service = Literal["api", "worker", "cli"]
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
# uvicorn adds a copy of its message with ANSI colour codes for terminals.
_DROPPED = {"color_message"}
_SECRET_WORDS = ("secret", "password", "token", "authorization")


class JsonFormatter(logging.Formatter):
    """Formats a record, the bound fields and its `extra` fields as JSON; secrets are masked."""

    def __init__(self, service: Service) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line."""
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = {**bound_fields(), **record.__dict__}
        for key, value in fields.items():
            # A field never replaces the line's own keys (a record's `service`, say).
            if key in entry or key in _STANDARD or key in _DROPPED or key.startswith("_"):
                continue
            masked = any(word in key.lower() for word in _SECRET_WORDS)
            entry[key] = "***" if masked else value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str, *, service: Service) -> None:
    """Route every logger to one JSON handler at `level` (the CLI's: stderr, WARNING or above)."""
    stream = sys.stderr if service == "cli" else sys.stdout
    if service == "cli":
        level = logging.getLevelName(max(logging.getLevelName(level), logging.WARNING))
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
