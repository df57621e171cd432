"""The JSON wire format of a job, on one cattrs converter, with the 256 KiB limit of SQS.

Encoding and decoding accept the same jobs: at most MAX_JOB_BYTES of UTF-8, every string valid
Unicode text (a lone surrogate such as "\\ud800" is not), a payload of JSON values without
floats (`JsonValue`). A body breaking any rule is an InvalidJob whose message says why in one
printable line.
"""

from __future__ import annotations

import json
import json.scanner
from _json import encode_basestring, make_encoder
from collections.abc import Mapping
from typing import TypeGuard

from cattrs import transform_error
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter
from cattrs.v import format_exception

from skincare_core.jobs.errors import InvalidJob, JobTooLarge
from skincare_core.jobs.job import Job, JsonValue

MAX_JOB_BYTES = 256 * 1024


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_INVALID = "not a valid job: "
_JSON_TYPES = {
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}
_KEYS = {"id", "type", "payload"}
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
# The compact encoder json.dumps(separators=(",", ":"), ensure_ascii=False) builds on every call,
# built once, so encoding thousands of jobs (enqueue_many) builds it once.
_encode = make_encoder(None, _not_json, encode_basestring, None, ":", ",", False, False, True)

converter = make_converter(forbid_extra_keys=True)
converter.register_structure_hook_func(
    lambda t: t == Mapping[str, str], lambda v, _: _string_map(v)
)
# A job without headers encodes without a headers key: its body stays small.
converter.register_unstructure_hook(
    Job, make_dict_unstructure_fn(Job, converter, headers=override(omit_if_default=True))
)
# cattrs' default str hook calls str() on anything, turning {"id": {}} into the id "{}".
converter.register_structure_hook(str, lambda v, _: _string(v))
# After the str hook: the generated function takes the hooks registered when it is made.
converter.register_structure_hook(
    Job,
    make_dict_structure_fn(Job, converter, payload=override(struct_hook=lambda v, _: _payload(v))),
)


def _text(value: str) -> str:
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError as exc:
            bad = ascii(value[exc.start])
            raise InvalidJob(f"lone surrogate {bad} at index {exc.start} is not text") from None
    return value


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidJob(f"expected a string, got {type(value).__name__}")
    return _text(value)


def _string_map(value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidJob("payload must be an object of string values")
    return {_text(k): _text(v) for k, v in value.items()}


def _payload(value: object) -> dict[str, JsonValue]:
    if not isinstance(value, dict):
        raise InvalidJob("payload must be a JSON object")
    return {_key(k): _json(v) for k, v in value.items()}


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidJob(f"payload keys must be strings, got {type(key).__name__}")
    return _text(key)


def _json(value: object) -> JsonValue:
    """`value` if it is a payload's JSON value (its strings text, no float anywhere)."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return _payload(value)
    kind = "a number with a fraction" if isinstance(value, float) else type(value).__name__
    raise InvalidJob(
        f"payload values are strings, integers, booleans, null, arrays or objects: got {kind}"
    )


def _describe(exc: BaseException, kind: type | None) -> str:
    return str(exc) if isinstance(exc, InvalidJob) else format_exception(exc, kind)


def encode_job(job: Job) -> str:
    """Encode a job as compact JSON; raise JobTooLarge past MAX_JOB_BYTES so no queue sees it,
    InvalidJob for a string that is not Unicode text or a payload value that is not JSON."""
    if not _flat(job.payload):
        _payload(job.payload)
    fields: dict[str, object] = {"id": job.id, "type": job.type, "payload": job.payload}
    # A job without headers encodes without a headers key: its body stays small.
    if job.headers:
        fields["headers"] = job.headers
    text = "".join(_encode(fields, 0))
    # An ASCII body is its own size and holds no lone surrogate: no need to encode it.
    if text.isascii():
        size = len(text)
    else:
        try:
            size = len(text.encode())
        except UnicodeEncodeError:
            raise InvalidJob(f"job {job.id!a} holds a lone surrogate, which is not text") from None
    if size > MAX_JOB_BYTES:
        raise JobTooLarge(job.id, size)
    return text


def decode_job(text: str | bytes) -> Job:
    """Decode a job; any malformed input raises InvalidJob with the reason."""
    # A str of n characters is at most 4n bytes of UTF-8: a short body needs no encoding to size.
    if isinstance(text, bytes) or len(text) * 4 > MAX_JOB_BYTES:
        size = len(text) if isinstance(text, bytes) else len(text.encode(errors="surrogatepass"))
        if size > MAX_JOB_BYTES:
            raise InvalidJob(f"{_INVALID}body is {size} bytes, over the {MAX_JOB_BYTES}-byte limit")
    try:
        raw = _loads(text)
    except ValueError as exc:
        raise InvalidJob(f"{_INVALID}{exc}") from exc
    if not isinstance(raw, dict):
        kind = "null" if raw is None else _JSON_TYPES.get(type(raw), type(raw).__name__)
        raise InvalidJob(f"{_INVALID}expected a JSON object, got {kind}")
    return _well_formed(raw) or _structure(raw)


def _loads(text: str | bytes) -> object:
    # json.loads' own C scanner without its two whitespace regexes, which a compact body (as
    # encode_job writes it) does not need. Anything else goes through json.loads.
    if type(text) is str:
        try:
            raw, end = _scan(text, 0)
        except (StopIteration, ValueError):
            pass
        else:
            if end == len(text):
                return raw
    return json.loads(text)


def _well_formed(raw: dict[str, object]) -> Job | None:
    # The shape encode_job writes, checked by hand: cattrs is too slow for every job's path.
    # ASCII strings cannot hold a lone surrogate; anything else is left to the cattrs path.
    if raw.keys() != _KEYS:
        return None
    job_id, job_type, payload = raw["id"], raw["type"], raw["payload"]
    if not (_ascii_text(job_id) and _ascii_text(job_type) and job_id and job_type):
        return None
    if type(payload) is not dict or not all(_ascii_text(k) for k in payload):
        return None
    if not _flat(payload):
        return None
    return Job(job_id, job_type, payload)


def _ascii_text(value: object) -> TypeGuard[str]:
    return type(value) is str and value.isascii()


def _flat(payload: Mapping[str, object]) -> bool:
    """Whether every value is an ASCII string, an integer, a boolean or null: no check needed."""
    for value in payload.values():
        if type(value) is str:
            if not value.isascii():
                return False
        elif not (value is None or type(value) is int or type(value) is bool):
            return False
    return True


def _structure(raw: dict[str, object]) -> Job:
    try:
        job = converter.structure(raw, Job)
    except Exception as exc:
        reasons = transform_error(exc, format_exception=_describe)
        raise InvalidJob(_INVALID + "; ".join(reasons)) from exc
    if not job.id or not job.type:
        raise InvalidJob(f"{_INVALID}job id and type must be non-empty strings")
    return job
