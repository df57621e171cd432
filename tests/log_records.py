"""Reading the fields a log record carries from `extra=`, which LogRecord does not declare."""

from __future__ import annotations

import logging


def fields(record: logging.LogRecord, *names: str) -> tuple[object, ...]:
    """The values of `names` on `record`, in order (KeyError for a field it lacks)."""
    return tuple(vars(record)[name] for name in names)
