"""SQS message attributes of jobs, and reading attributes back from received messages."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias

from skincare_core.jobs.job import Job

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
