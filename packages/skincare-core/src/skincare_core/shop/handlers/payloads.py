"""Reading identities out of job payloads; anything malformed is a permanent error.

An identity read is bound to the job's log lines (the worker unbinds them once the job settles).
"""

from __future__ import annotations

from datetime import datetime

from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.log_context import bind_fields


def order_id_of(job: Job) -> int:
    """The positive integer `order_id` of the payload, bound to the job's log lines from now on."""
    raw = job.payload.get("order_id", "")
    # str.isdigit() is true for "²", which int() refuses, and for non-ASCII digits like "١٢".
    if not (isinstance(raw, str) and raw.isascii() and raw.isdigit()) or int(raw) <= 0:
        raise InvalidJob(f"payload order_id must be a positive integer, got {raw!r}")
    order_id = int(raw)
    bind_fields(order_id=order_id)
    return order_id


def event_id_of(job: Job) -> str:
    """The non-empty `event_id` of the payload, bound to the job's log lines from now on."""
    raw = job.payload.get("event_id", "")
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidJob("payload event_id is missing")
    bind_fields(event_id=raw)
    return raw


def tick_of(job: Job) -> datetime:
    """The aware `tick` a periodic job carries (its schedule's time, ISO 8601)."""
    raw = job.payload.get("tick", "")
    try:
        tick = datetime.fromisoformat(str(raw))
    except ValueError:
        raise InvalidJob(f"payload tick must be an ISO 8601 time, got {raw!r}") from None
    if tick.utcoffset() is None:
        raise InvalidJob(f"payload tick must carry its UTC offset, got {raw!r}")
    bind_fields(tick=raw)
    return tick
