"""SQS message attributes of jobs and dead letters, and reading them back."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter

# A dead message whose body is not a job is listed under this type, its body as payload.
INVALID_BODY_TYPE = "sqs.invalid_body"
_POLICY_REASON = "redrive policy: received maxReceiveCount times without an ack"
MAX_VISIBILITY_SECONDS = 12 * 60 * 60


def visibility_seconds(duration: timedelta) -> int:
    """Whole seconds, rounded up, within SQS's 0 s..12 h visibility range."""
    return min(max(math.ceil(duration.total_seconds()), 0), MAX_VISIBILITY_SECONDS)


def _string(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


def job_attributes(job: Job) -> dict[str, dict[str, str]]:
    """Message attributes that name the job without decoding its body."""
    return {"job_id": _string(job.id), "job_type": _string(job.type)}


def dead_attributes(
    *, reason: str, attempts: int, message_id: str, now: datetime
) -> dict[str, dict[str, str]]:
    """Message attributes of a dead letter: why, after how many deliveries, from which message."""
    return {
        "reason": _string(reason or "no reason given"),
        "attempts": {"DataType": "Number", "StringValue": str(attempts)},
        "original_message_id": _string(message_id or "unknown"),
        "dead_at": _string(now.isoformat()),
    }


def attribute(message: dict[str, Any], name: str) -> str | None:
    """A message attribute's string value, or None."""
    value = message.get("MessageAttributes", {}).get(name)
    return None if value is None else str(value["StringValue"])


def receive_count(message: dict[str, Any]) -> int:
    """ApproximateReceiveCount: deliveries so far, this one included."""
    return int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))


def job_of(message: dict[str, Any]) -> Job:
    """The job in a message, or a stand-in holding the body when it is not a job."""
    try:
        return decode_job(message["Body"])
    except InvalidJob:
        original = attribute(message, "original_message_id") or message["MessageId"]
        return Job(id=original, type=INVALID_BODY_TYPE, payload={"body": message["Body"]})


def dead_letter_of(message: dict[str, Any]) -> DeadLetter:
    """A DLQ message as a DeadLetter; one moved by the redrive policy has no reason attached."""
    attempts = attribute(message, "attempts")
    dead_at = attribute(message, "dead_at")
    sent = int(message.get("Attributes", {}).get("SentTimestamp", "0")) / 1000
    return DeadLetter(
        job=job_of(message),
        attempts=int(attempts) if attempts else receive_count(message) - 1,
        error=attribute(message, "reason") or _POLICY_REASON,
        dead_at=datetime.fromisoformat(dead_at) if dead_at else datetime.fromtimestamp(sent, UTC),
    )
