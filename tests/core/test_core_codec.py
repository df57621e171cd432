"""The job wire format: round trip, the 256 KiB limit, and every malformed input refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.codec import MAX_JOB_BYTES, converter, decode_job, encode_job
from skincare_core.jobs.errors import InvalidJob, JobTooLarge, PermanentJobError
from skincare_core.jobs.job import Job, JsonValue, new_job

text = st.text(min_size=1, max_size=20)
# Half the strings hold a lone surrogate, which plain st.text() never draws.
odd_text = st.text(max_size=6) | st.builds(
    lambda head, lone, tail: head + lone + tail,
    st.text(max_size=3),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.text(max_size=3),
)


def _is_text(value: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)


@given(text, text, st.dictionaries(st.text(max_size=10), st.text(max_size=30), max_size=5))
def test_any_job_round_trips(job_id: str, job_type: str, payload: dict[str, str]) -> None:
    job = Job(job_id, job_type, payload)
    assert decode_job(encode_job(job)) == job
    assert decode_job(encode_job(job).encode()) == job


@given(odd_text, odd_text, st.dictionaries(odd_text, odd_text, max_size=3))
def test_encode_and_decode_accept_the_same_jobs(
    job_id: str, job_type: str, payload: dict[str, str]
) -> None:
    job = Job(job_id or "i", job_type or "t", payload)
    strings = [job.id, job.type, *payload, *payload.values()]
    if all(map(_is_text, strings)):
        assert decode_job(encode_job(job)) == job
    else:
        with pytest.raises(InvalidJob, match="lone surrogate"):
            encode_job(job)
    # The same job written as JSON escapes, as a third party would send it.
    escaped = json.dumps({"id": job.id, "type": job.type, "payload": payload})
    if all(map(_is_text, strings)):
        assert decode_job(escaped) == job
    else:
        with pytest.raises(InvalidJob, match="lone surrogate"):
            decode_job(escaped)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            '{"id": "\\ud800", "type": "t"}',
            r"lone surrogate '\\ud800' at index 0 is not text @ \$.id",
        ),
        (
            '{"id": "1", "type": "t", "payload": {"k": "a\\udfff"}}',
            r".* at index 1 is not text @ \$.payload",
        ),
        ("[1]", "expected a JSON object, got an array"),
        ("true", "expected a JSON object, got a boolean"),
        ('{"id": "1"}', r"required field missing @ \$.type"),
        ('{"id": 1, "type": "t"}', r"expected a string, got int @ \$.id"),
        ('{"id": "1", "type": "t", "x": 1}', r"extra fields found \(x\) @ \$"),
    ],
)
def test_an_invalid_body_says_what_is_wrong_and_where(body: str, reason: str) -> None:
    with pytest.raises(InvalidJob, match=f"^not a valid job: {reason}$"):
        decode_job(body)


@pytest.mark.parametrize("extra", [0, 1])
def test_a_body_over_the_limit_is_an_invalid_job_before_it_is_parsed(extra: int) -> None:
    fits = Job("j", "t", {"x": "a" * (MAX_JOB_BYTES - overhead() + extra)})
    body = json.dumps(converter.unstructure(fits), separators=(",", ":"))
    if extra:
        with pytest.raises(InvalidJob, match=f"is {MAX_JOB_BYTES + 1} bytes, over the"):
            decode_job(body)
        with pytest.raises(InvalidJob, match="over the"):
            decode_job(body.encode())
    else:
        assert decode_job(body) == fits


def test_encoding_is_compact_json() -> None:
    job = Job("1", "t", {"order_id": "7"})
    assert encode_job(job) == '{"id":"1","type":"t","payload":{"order_id":"7"}}'


def test_new_jobs_get_unique_ids_and_copy_the_payload() -> None:
    payload = {"order_id": "1"}
    jobs = [new_job("t", **payload) for _ in range(100)]
    assert len({job.id for job in jobs}) == 100
    payload["order_id"] = "2"
    assert jobs[0].payload == {"order_id": "1"}


def overhead() -> int:
    return len(encode_job(Job("j", "t", {"x": ""})).encode())


def test_a_job_of_exactly_the_limit_is_accepted() -> None:
    job = Job("j", "t", {"x": "a" * (MAX_JOB_BYTES - overhead())})
    assert len(encode_job(job).encode()) == MAX_JOB_BYTES == 262_144


def test_a_job_one_byte_over_the_limit_is_refused() -> None:
    job = Job("j", "t", {"x": "a" * (MAX_JOB_BYTES - overhead() + 1)})
    with pytest.raises(JobTooLarge) as raised:
        encode_job(job)
    assert (raised.value.job_id, raised.value.size) == ("j", MAX_JOB_BYTES + 1)


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    job = Job("j", "t", {"x": "é" * ((MAX_JOB_BYTES - overhead()) // 2 + 1)})
    with pytest.raises(JobTooLarge):
        encode_job(job)


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        "null",
        '{"id":"1","payload":{}}',
        '{"type":"t","payload":{}}',
        '{"id":"1","type":"t","payload":{"n":1.5}}',
        '{"id":"1","type":"t","payload":{"n":[{"m":1e3}]}}',
        '{"id":"1","type":"t","payload":["a"]}',
        '{"id":"1","type":"t","payload":{},"extra":1}',
        '{"id":"","type":"t","payload":{}}',
        '{"id":"1","type":"","payload":{}}',
        '{"id":1,"type":"t","payload":{}}',
        '{"id":{},"type":"t","payload":{}}',
        '{"id":"1","type":["t"],"payload":{}}',
        '{"id":"1","type":true,"payload":{}}',
        b"\xff\xfe",
        '{"id":"1","type":"t","payload":{}} trailing',
        '{"id":"1","type":"t","payload":{}}{}',
    ],
)
def test_malformed_bodies_are_invalid_jobs(body: str | bytes) -> None:
    with pytest.raises(InvalidJob) as raised:
        decode_job(body)
    assert isinstance(raised.value, PermanentJobError)


@pytest.mark.parametrize(
    "body",
    [
        ' {"id":"1","type":"t","payload":{}}\n',
        '{ "id": "1", "type": "t", "payload": {} }',
        b'{"id":"1","type":"t","payload":{}}',
    ],
)
def test_any_valid_json_spelling_of_a_job_decodes(body: str | bytes) -> None:
    assert decode_job(body) == Job("1", "t")


def test_a_missing_payload_decodes_as_empty_as_the_job_default() -> None:
    assert decode_job('{"id":"1","type":"t"}') == Job("1", "t")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8")),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_any_json_payload_without_floats_round_trips(payload: dict[str, JsonValue]) -> None:
    job = Job("1", "t", payload)
    assert decode_job(encode_job(job)) == job
    assert decode_job(json.dumps({"id": "1", "type": "t", "payload": payload})) == job


def test_a_payload_float_is_refused_both_ways() -> None:
    with pytest.raises(InvalidJob, match="a number with a fraction"):
        encode_job(Job("1", "t", {"n": [1.5]}))  # type: ignore[list-item] # what mypy refuses
    with pytest.raises(InvalidJob, match=r"a number with a fraction @ \$\.payload"):
        decode_job('{"id":"1","type":"t","payload":{"n":1.5}}')


def test_a_decoded_payload_is_a_plain_string_map() -> None:
    job = decode_job(json.dumps({"id": "1", "type": "t", "payload": {"a": "b"}}))
    assert dict(job.payload) == {"a": "b"}
