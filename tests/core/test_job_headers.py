"""Job headers on the wire: absent from a job without them, kept through a round trip."""

from __future__ import annotations

import json

from attrs import evolve

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.job import new_job


def test_a_job_without_headers_encodes_as_before_headers_existed() -> None:
    job = new_job("t", order_id="7")
    assert set(json.loads(encode_job(job))) == {"id", "type", "payload"}
    assert decode_job(encode_job(job)) == job


def test_headers_survive_a_round_trip() -> None:
    job = evolve(new_job("t"), headers={"traceparent": "00-abc-def-01"})
    assert decode_job(encode_job(job)).headers == {"traceparent": "00-abc-def-01"}
