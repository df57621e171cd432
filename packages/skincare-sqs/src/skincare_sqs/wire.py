"""How jobs and dead letters are written on SQS messages, and read back: a job's attributes,
sizes and visibility as SQS counts them, and a dead letter's stamp.

A dead letter's stamp says why it died, after how many deliveries, when, from which message.
The adapter stamps a message when it dead-letters it. A message the redrive policy moved has no
stamp, and SQS counts every receive, the DLQ's own included, so its receive count grows each
time the DLQ is read. It is stamped at the first look instead: the count SQS gives then is the
source queue's deliveries plus that one receive. (A receive by another DLQ reader before the
first look, such as the AWS console's, would count too.)
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import MessageAttributeValueOutputTypeDef, MessageTypeDef

MAX_VISIBILITY_SECONDS = 12 * 60 * 60
# SQS's largest message, body and attributes together (the queues are provisioned with it).
MAX_MESSAGE_BYTES = 1024 * 1024
_MAX_NAME_CHARS = 256
# W3C trace context: what tracing tools look for on a message.
_TRACE_HEADERS = ("traceparent", "tracestate")
# The characters SQS carries in bodies and attribute values; anything else is refused.
_NOT_SQS_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# Quoted: the SQS stubs are there for type checking only.
AttributeValue: TypeAlias = "MessageAttributeValueOutputTypeDef"
Attributes: TypeAlias = "dict[str, MessageAttributeValueOutputTypeDef]"
# A message as ReceiveMessage returns it.
SqsMessage: TypeAlias = "MessageTypeDef"


def visibility_seconds(duration: timedelta) -> int:
    """Whole seconds, rounded up, within SQS's 0 s..12 h visibility range."""
    return min(max(math.ceil(duration.total_seconds()), 0), MAX_VISIBILITY_SECONDS)


def sqs_text(value: str) -> str:
    """`value` with every character SQS refuses written as a Python escape (\\x00, \\ud800)."""
    return _NOT_SQS_TEXT.sub(lambda found: ascii(found.group())[1:-1], value)


def string(value: str) -> AttributeValue:
    """A String attribute holding `value` as SQS can carry it."""
    return {"DataType": "String", "StringValue": sqs_text(value)}


def job_attributes(job: Job) -> Attributes:
    """Attributes that name the job without decoding its body (hints only: cut to 256 chars),
    and its trace context where it has one (the body holds it too: the worker reads that)."""
    attributes = {
        "job_id": string(job.id[:_MAX_NAME_CHARS]),
        "job_type": string(job.type[:_MAX_NAME_CHARS]),
    }
    for name in _TRACE_HEADERS:
        if value := job.headers.get(name):
            attributes[name] = string(value[:_MAX_NAME_CHARS])
    return attributes


def attribute(message: SqsMessage, name: str) -> str | None:
    """A String or Number attribute's value, or None (also for a Binary one)."""
    value = message.get("MessageAttributes", {}).get(name)
    return None if value is None else value.get("StringValue")


# A snoozed job is sent again as a new message (SQS counts every receive of a message, and a
# snooze must spend none): these carry what the new message's own receive count cannot know.
SPENT = "skincare_attempts"
"""Attempts the job spent on earlier messages (a new message's receives add to them)."""
SNOOZES = "skincare_snoozes"
"""How often the job snoozed so far."""
SNOOZE_DUE = "skincare_due"
"""When a snooze longer than SQS's 15-minute delay ends: the message hops on until then."""


def snooze_attributes(job: Job, *, spent: int, snoozes: int, due: datetime | None) -> Attributes:
    """A snoozed job's attributes: its names, the attempts spent, its snoozes, the end of a
    long snooze."""
    counts: Attributes = {
        SPENT: {"DataType": "Number", "StringValue": str(spent)},
        SNOOZES: {"DataType": "Number", "StringValue": str(snoozes)},
    }
    if due is not None:
        counts[SNOOZE_DUE] = string(due.isoformat())
    return job_attributes(job) | counts


def carried(message: SqsMessage) -> tuple[int, int]:
    """(attempts spent on earlier messages, snoozes) a message carries; (0, 0) if none."""
    return _count(attribute(message, SPENT)), _count(attribute(message, SNOOZES))


def snooze_due(message: SqsMessage) -> datetime | None:
    """When the long snooze a message is part of ends; None if it is no such message."""
    raw = attribute(message, SNOOZE_DUE)
    try:
        due = None if raw is None else datetime.fromisoformat(raw)
    except ValueError:
        return None
    return due if due is not None and due.tzinfo is not None else None


def _count(raw: str | None) -> int:
    return int(raw) if raw is not None and raw.isdecimal() else 0


def receive_count(message: SqsMessage) -> int:
    """ApproximateReceiveCount: deliveries so far, this one included."""
    return int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))


def sent_at(message: SqsMessage) -> datetime | None:
    """SentTimestamp (epoch milliseconds) as an aware time; None if SQS did not send it."""
    millis = message.get("Attributes", {}).get("SentTimestamp")
    return None if millis is None else datetime.fromtimestamp(int(millis) / 1000, UTC)


def message_bytes(body: str, attributes: Attributes) -> int:
    """A message's size as SQS counts it: the body and each attribute's name, type and value."""
    sizes = (
        len(name) + len(value["DataType"]) + len(value["StringValue"].encode())
        for name, value in attributes.items()
    )
    return len(body.encode()) + sum(sizes)


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
