"""Jobs (what goes through a queue) and messages (how a queue hands a job back)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import datetime
from typing import TypeAlias, Union

from attrs import field, frozen

# Union, not |: the alias is recursive, so its parts are strings until they are resolved.
JsonValue: TypeAlias = Union[str, int, bool, "list[JsonValue]", "dict[str, JsonValue]", None]
"""A JSON value a payload may hold: no floats (a job carries identities, and a Decimal travels
as a string)."""
Payload: TypeAlias = Mapping[str, JsonValue]
"""A job's arguments as JSON: an object of identities, never snapshots."""


def _frozen_payload(value: Payload) -> Payload:
    return dict(value)


def _frozen_headers(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@frozen
class Job:
    """A unit of background work: an id, a type and identities (never snapshots) as payload, a
    JSON object (a typed job's arguments, unstructured by `skincare_core.jobs.arguments`).
    `headers` carry context from whoever enqueued it (the trace context), never job data."""

    id: str
    type: str
    payload: Payload = field(factory=dict, converter=_frozen_payload)
    headers: Mapping[str, str] = field(factory=dict, converter=_frozen_headers)


@frozen
class Message:
    """A delivered job: `receipt` is the lease handle, `attempts` is 1 on first delivery,
    `enqueued_at` when the job was first enqueued (None where the queue cannot tell), `snoozes`
    how many times its handler asked to run later (`Snooze`; those runs spend no attempt)."""

    receipt: str
    job: Job
    attempts: int
    enqueued_at: datetime | None = None
    snoozes: int = 0


def time_ordered_id(unix_ms: int, entropy: bytes) -> str:
    """A UUIDv7 (RFC 9562) as 32 hex digits: `unix_ms` in the first 48 bits, the rest the first
    74 bits of `entropy` (10 bytes) around the version and variant bits. Ids of later
    milliseconds sort after earlier ones, so an index on them grows at its right end."""
    if not 0 <= unix_ms < 1 << 48:
        raise ValueError(f"a UUIDv7 holds 48 bits of milliseconds, got {unix_ms}")
    if len(entropy) != 10:
        raise ValueError(f"a UUIDv7 takes 10 bytes of entropy, got {len(entropy)}")
    rand = int.from_bytes(entropy, "big") >> 6
    rand_a, rand_b = rand >> 62, rand & ((1 << 62) - 1)
    value = unix_ms << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return f"{value:032x}"


def new_job_id() -> str:
    """A fresh, unique, time-ordered job id (a UUIDv7 in hex): the jobs' and the history's
    id indexes take new ids at their right end instead of at random pages."""
    return time_ordered_id(time.time_ns() // 1_000_000, os.urandom(10))


def new_job(job_type: str, **payload: JsonValue) -> Job:
    """Build a job with a fresh id; payload values are identities as JSON values. A typed job
    is built by its definition instead (`JobDefinition.job`)."""
    return Job(id=new_job_id(), type=job_type, payload=payload)


def job_fields(message: Message, **extra: object) -> dict[str, object]:
    """The log fields of a delivered job: id, type, attempts, and `extra`."""
    base = {"job_id": message.job.id, "type": message.job.type, "attempts": message.attempts}
    return {**base, **extra}
