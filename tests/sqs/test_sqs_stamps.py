"""What the adapter writes into SQS attributes: text SQS accepts, within SQS's message size."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.job import Job
from skincare_sqs.wire import (
    MAX_MESSAGE_BYTES,
    Attributes,
    SqsMessage,
    dead_letter_of,
    first_look_stamp,
    job_attributes,
    message_bytes,
    sqs_text,
    stamped,
)

SQS_TEXT = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
any_text = st.text(
    st.characters(exclude_categories=()) | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
)
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


@given(any_text)
def test_sqs_text_holds_only_what_sqs_accepts_and_keeps_what_it_does(value: str) -> None:
    written = sqs_text(value)
    assert SQS_TEXT.fullmatch(written)
    assert sqs_text(written) == written
    if SQS_TEXT.fullmatch(value):
        assert written == value


@given(any_text, any_text)
def test_job_attributes_are_sqs_text(job_id: str, job_type: str) -> None:
    for value in job_attributes(Job(job_id or "i", job_type or "t")).values():
        assert SQS_TEXT.fullmatch(value["StringValue"])
        assert len(value["StringValue"]) <= 256 * 10


@given(
    st.integers(min_value=0, max_value=MAX_MESSAGE_BYTES),
    any_text,
    st.sampled_from(["a", "é", "😀"]),
)
def test_a_stamp_fits_beside_the_body_or_there_is_none(
    body_bytes: int, reason: str, fill: str
) -> None:
    body = fill * (body_bytes // len(fill.encode()))
    names = job_attributes(Job("job-1", "t"))
    stamp = stamped(body, names, reason=reason, attempts=3, message_id="m-1", dead_at=NOW)
    if stamp is None:
        assert len(body.encode()) > MAX_MESSAGE_BYTES - 400
        return
    assert message_bytes(body, stamp) <= MAX_MESSAGE_BYTES
    assert stamp["reason"]["StringValue"]
    assert all(SQS_TEXT.fullmatch(v["StringValue"]) for v in stamp.values())
    assert stamp.keys() >= {"job_id", "job_type", "attempts", "dead_at", "original_message_id"}


def test_a_body_of_half_a_mebibyte_keeps_a_long_reason_whole() -> None:
    reason = "PermanentJobError: " + "x" * 4000
    stamp = stamped("b" * 512 * 1024, {}, reason=reason, attempts=1, message_id="m", dead_at=NOW)
    assert stamp is not None
    assert stamp["reason"]["StringValue"] == reason


def _message(attributes: Attributes, count: str = "3") -> SqsMessage:
    return {
        "MessageId": "m-1",
        "Body": '{"id": "j", "type": "t"}',
        "ReceiptHandle": "r",
        "Attributes": {"ApproximateReceiveCount": count, "SentTimestamp": "1780000000000"},
        "MessageAttributes": attributes,
    }


@given(st.dictionaries(st.sampled_from(["attempts", "dead_at", "reason", "job_id"]), any_text))
def test_reading_a_dead_message_survives_any_attribute_values(values: dict[str, str]) -> None:
    attributes: Attributes = {
        name: {"DataType": "String", "StringValue": v} for name, v in values.items()
    }
    dead = dead_letter_of(_message(attributes))
    assert dead.job == Job("j", "t")
    assert dead.attempts >= 0


def test_a_first_look_stamp_freezes_the_source_queue_count() -> None:
    unstamped = _message({}, count="6")
    assert dead_letter_of(unstamped).attempts == 5
    stamp = first_look_stamp(unstamped)
    assert stamp is not None
    frozen = dead_letter_of(_message(stamp, count="40"))
    assert frozen == dead_letter_of(unstamped)
