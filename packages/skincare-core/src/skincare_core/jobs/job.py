"""Jobs (what goes through a queue) and messages (how a queue hands a job back)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime

from attrs import field, frozen


def _frozen_payload(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@frozen
class Job:
    """A unit of background work: an id, a type and identities (never snapshots) as payload.
    `headers` carry context from whoever enqueued it (the trace context), never job data."""

    id: str
    type: str
    payload: Mapping[str, str] = field(factory=dict, converter=_frozen_payload)
    headers: Mapping[str, str] = field(factory=dict, converter=_frozen_payload)


@frozen
class Message:
    """A delivered job: `receipt` is the lease handle, `attempts` is 1 on first delivery,
    `enqueued_at` when the job was first enqueued (None where the queue cannot tell)."""

    receipt: str
    job: Job
    attempts: int
    enqueued_at: datetime | None = None


def new_job_id() -> str:
    """A fresh, unique, time-ordered-enough job id (UUID4 hex)."""
    return uuid.uuid4().hex


def new_job(job_type: str, **payload: str) -> Job:
    """Build a job with a fresh id; payload values are identities as strings."""
    return Job(id=new_job_id(), type=job_type, payload=payload)


def job_fields(message: Message, **extra: object) -> dict[str, object]:
    """The log fields of a delivered job: id, type, attempts, and `extra`."""
    base = {"job_id": message.job.id, "type": message.job.type, "attempts": message.attempts}
    return {**base, **extra}
