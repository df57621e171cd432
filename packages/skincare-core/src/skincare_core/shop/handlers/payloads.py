"""Reading identities out of job payloads; anything malformed is a permanent error."""

from __future__ import annotations

from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job


def order_id_of(job: Job) -> int:
    """The positive integer `order_id` of the payload."""
    raw = job.payload.get("order_id", "")
    # str.isdigit() is true for "²", which int() refuses, and for non-ASCII digits like "١٢".
    if not (raw.isascii() and raw.isdigit()) or int(raw) <= 0:
        raise InvalidJob(f"payload order_id must be a positive integer, got {raw!r}")
    return int(raw)


def event_id_of(job: Job) -> str:
    """The non-empty `event_id` of the payload."""
    raw = job.payload.get("event_id", "")
    if not raw.strip():
        raise InvalidJob("payload event_id is missing")
    return raw
