"""JSON logs on stdout: one object per line with time, level, logger, message and fields."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
_SECRET_WORDS = ("secret", "password", "token", "authorization")


class JsonFormatter(logging.Formatter):
    """Formats a record and its `extra` fields as JSON; secret-named fields are masked."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line."""
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                masked = any(word in key.lower() for word in _SECRET_WORDS)
                entry[key] = "***" if masked else value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    """Route every logger to stdout as JSON at `level` (services only; libraries never do this)."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
