"""A dead letter's stamp: why it died, after how many deliveries, when, from which message.

The adapter stamps a message when it dead-letters it. A message the redrive policy moved has no
stamp, and SQS counts every receive, the DLQ's own included, so its receive count grows each
time the DLQ is read. It is stamped at the first look instead: the count SQS gives then is the
source queue's deliveries plus that one receive. (A receive by another DLQ reader before the
first look, such as the AWS console's, would count too.)
"""

from __future__ import annotations

from datetime import UTC, datetime

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter
from skincare_sqs.wire import (
    MAX_MESSAGE_BYTES,
    Attributes,
    SqsMessage,
    attribute,
    job_attributes,
    message_bytes,
    receive_count,
    sqs_text,
    string,
)

# A dead message whose body is not a job is listed under this type, its body as payload.
INVALID_BODY_TYPE = "sqs.invalid_body"
POLICY_REASON = "redrive policy: received maxReceiveCount times without an ack"
MAX_REASON_CHARS = 4096
_MIN_REASON_BYTES = 64


def stamped(
    body: str,
    names: Attributes,
    *,
    reason: str,
    attempts: int,
    message_id: str,
    dead_at: datetime,
) -> Attributes | None:
    """`names` plus the stamp, the reason cut to fit SQS's message size beside `body`.

    None when the body leaves no room for a readable stamp (within a few hundred bytes of
    SQS's 1 MiB limit): such a message can only be moved by the redrive policy.
    """
    fixed = names | {
        "attempts": {"DataType": "Number", "StringValue": str(attempts)},
        "original_message_id": string(message_id or "unknown"),
        "dead_at": string(dead_at.isoformat()),
    }
    room = MAX_MESSAGE_BYTES - message_bytes(body, fixed) - len("reason") - len("String")
    if room < _MIN_REASON_BYTES:
        return None
    text = sqs_text(reason or "no reason given")[:MAX_REASON_CHARS].encode()[:room]
    return fixed | {"reason": string(text.decode(errors="ignore"))}


def first_look_stamp(message: SqsMessage) -> Attributes | None:
    """The stamp of a DLQ message the redrive policy moved, read at its first receive."""
    job = job_of(message)
    names = job_attributes(job) if job.type != INVALID_BODY_TYPE else {}
    return stamped(
        message["Body"],
        names,
        reason=POLICY_REASON,
        attempts=max(receive_count(message) - 1, 0),
        message_id=message["MessageId"],
        dead_at=_sent_at(message),
    )


def has_stamp(message: SqsMessage) -> bool:
    """Whether the message carries a readable stamp."""
    return _stamp(message) is not None


def job_of(message: SqsMessage) -> Job:
    """The job in a message, or a stand-in holding the body when it is not a job."""
    try:
        return decode_job(message["Body"])
    except InvalidJob:
        original = attribute(message, "original_message_id") or message["MessageId"]
        return Job(id=original, type=INVALID_BODY_TYPE, payload={"body": message["Body"]})


def dead_letter_of(message: SqsMessage) -> DeadLetter:
    """A DLQ message as a DeadLetter; unstamped, it shows what SQS counts now."""
    stamp = _stamp(message)
    if stamp is None:
        attempts, dead_at = max(receive_count(message) - 1, 0), _sent_at(message)
        error = POLICY_REASON
    else:
        (attempts, dead_at), error = stamp, attribute(message, "reason") or "no reason given"
    return DeadLetter(job=job_of(message), attempts=attempts, error=error, dead_at=dead_at)


def _stamp(message: SqsMessage) -> tuple[int, datetime] | None:
    attempts, dead_at = attribute(message, "attempts"), attribute(message, "dead_at")
    if attempts is None or dead_at is None or not attempts.isdecimal():
        return None
    try:
        when = datetime.fromisoformat(dead_at)
    except ValueError:
        return None
    return (int(attempts), when) if when.tzinfo is not None else None


def _sent_at(message: SqsMessage) -> datetime:
    sent = message.get("Attributes", {}).get("SentTimestamp", "0")
    return datetime.fromtimestamp(int(sent) / 1000, UTC)
