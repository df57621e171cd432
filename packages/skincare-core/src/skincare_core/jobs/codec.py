"""The JSON wire format of a job, on one cattrs converter, with the 256 KiB limit of SQS."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cattrs.preconf.json import make_converter

from skincare_core.jobs.errors import InvalidJob, JobTooLarge
from skincare_core.jobs.job import Job

MAX_JOB_BYTES = 256 * 1024

converter = make_converter(forbid_extra_keys=True)
converter.register_structure_hook_func(
    lambda t: t == Mapping[str, str], lambda v, _: _string_map(v)
)
# cattrs' default str hook calls str() on anything, turning {"id": {}} into the id "{}".
converter.register_structure_hook(str, lambda v, _: _string(v))


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidJob(f"expected a string, got {type(value).__name__}")
    return value


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidJob("payload must be an object of string values")
    return dict(value)


def encode_job(job: Job) -> str:
    """Encode a job as compact JSON; raise JobTooLarge past MAX_JOB_BYTES so no queue sees it."""
    text = json.dumps(converter.unstructure(job), separators=(",", ":"), ensure_ascii=False)
    size = len(text.encode())
    if size > MAX_JOB_BYTES:
        raise JobTooLarge(job.id, size)
    return text


def decode_job(text: str | bytes) -> Job:
    """Decode a job; any malformed input raises InvalidJob with the reason."""
    try:
        raw = json.loads(text)
        job = converter.structure(raw, Job)
    except InvalidJob:
        raise
    except Exception as exc:
        raise InvalidJob(f"not a valid job: {exc}") from exc
    if not job.id or not job.type:
        raise InvalidJob("job id and type must be non-empty strings")
    return job
