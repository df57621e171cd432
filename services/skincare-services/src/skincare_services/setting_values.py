"""Setting values that are more than one word (the worker's queues, a duration) and the checks
of the settings' single values."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import NewType

import attrs

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.routing import check_queue_name

WorkerQueues = Mapping[str, int]
"""Named queue -> how many of its jobs one worker process runs at once."""

DEFAULT_WORKER_QUEUES: WorkerQueues = MappingProxyType({"critical": 8, "default": 16, "bulk": 4})
# HMAC keys and bearer tokens: under this many bytes they fall to guessing.
SECRET_BYTES = 32
_DURATION = re.compile(r"(\d+)\s*([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_worker_queues(raw: str) -> WorkerQueues:
    """`critical=8,default=16,bulk=4` as {name: concurrency}; ValueError when it is not that."""
    queues: dict[str, int] = {}
    for part in raw.split(","):
        name, _, count = (piece.strip() for piece in part.partition("="))
        if not count.isdigit() or int(count) < 1 or name in queues:
            raise ValueError(part)
        queues[check_queue_name(name)] = int(count)
    return MappingProxyType(queues)


RateLimits = NewType("RateLimits", Mapping[str, int])
"""Named queue or job type -> at most how many of its jobs start per second, every worker process
together (the windows are in the database on both backends)."""


NO_RATE_LIMITS = RateLimits(MappingProxyType({}))


def parse_rate_limits(raw: str) -> RateLimits:
    """`default=14,bulk=2` as {queue: jobs per second}; ValueError when it is not that."""
    return RateLimits(parse_worker_queues(raw))


JobTimeouts = NewType("JobTimeouts", Mapping[str, timedelta])
"""Job type -> how long one attempt of it may run before it is cancelled (and retried)."""

NO_JOB_TIMEOUTS = JobTimeouts(MappingProxyType({}))


def parse_job_timeouts(raw: str) -> JobTimeouts:
    """`process_payment=30,send_daily_sales_summary=10m` as {job type: timeout}, each a positive
    duration (`parse_duration`); ValueError when it is not that."""
    timeouts: dict[str, timedelta] = {}
    for part in raw.split(","):
        job_type, _, duration = (piece.strip() for piece in part.partition("="))
        if not job_type or job_type in timeouts:
            raise ValueError(part)
        timeouts[job_type] = parse_duration(duration)
    return JobTimeouts(MappingProxyType(timeouts))


def parse_concurrency_caps(raw: str) -> ConcurrencyCaps:
    """`type:send_confirmation_email=2,queue:default=8,key:smtp-relay=4:a+b` as caps: at most
    that many running at once of the job type, of the named queue, or of the job types a and b
    together (they share the key); ValueError naming the part when it is not that."""
    found: dict[str, dict[str, int]] = {"type": {}, "queue": {}, "key": {}}
    shared: dict[str, str] = {}
    for part in raw.split(","):
        kind, _, rest = part.strip().partition(":")
        name, _, value = (piece.strip() for piece in rest.partition("="))
        limit, _, members = value.partition(":")
        if kind not in found or not name or name in found[kind] or not limit.isdigit():
            raise ValueError(part)
        if (kind == "key") != bool(members) or int(limit) < 1:
            raise ValueError(part)
        found[kind][name] = int(limit)
        for job_type in members.split("+") if members else ():
            if not job_type or job_type in shared:
                raise ValueError(part)
            shared[job_type] = name
    return ConcurrencyCaps(found["type"], found["queue"], found["key"], shared)


def parse_duration(raw: str) -> timedelta:
    """`24h`, `30m`, `900s`, `1d` or plain seconds, positive; ValueError otherwise."""
    found = _DURATION.fullmatch(raw.strip().lower())
    if found is None or int(found[1]) == 0:
        raise ValueError(raw)
    return timedelta(seconds=int(found[1]) * _UNIT_SECONDS[found[2]])


def served_queues(configured: WorkerQueues, chosen: Sequence[str] | None) -> tuple[str, ...]:
    """The named queues a worker process serves: `chosen` (None: every configured one), each
    one of `configured`; ValueError naming the first that is not."""
    if chosen is None:
        return tuple(configured)
    unknown = [name for name in chosen if name not in configured] or ([] if chosen else [""])
    if unknown:
        listed = ", ".join(configured)
        raise ValueError(f"{unknown[0]!r} is not one of SKINCARE_WORKER_QUEUES: {listed}")
    return tuple(dict.fromkeys(chosen))


def not_negative(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    """An attrs validator: ValueError below 0."""
    if value < 0:
        raise ValueError(f"expected 0 or a positive number, got {value}")


def positive(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    """An attrs validator: ValueError at 0 or below."""
    if value <= 0:
        raise ValueError(f"expected a positive number, got {value}")


def email_address(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An attrs validator: ValueError for a value that is neither empty nor a bare address."""
    # A bare address, no display name: it goes into the summary's To header as it stands.
    local, at, domain = value.partition("@")
    if value and (
        not (local and at and domain) or "@" in domain or any(c.isspace() for c in value)
    ):
        raise ValueError(f"expected an e-mail address like admin@example.com, got {value!r}")


def http_url(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An attrs validator: ValueError for a value that is neither empty nor an http(s) URL."""
    scheme, sep, rest = value.partition("://")
    if value and not (scheme in ("http", "https") and sep and rest):
        raise ValueError(f"expected an http(s) URL like http://127.0.0.1:4318, got {value!r}")


def secret(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An attrs validator: ValueError for a secret under `SECRET_BYTES` bytes (its size only)."""
    size = len(value.encode())
    if size < SECRET_BYTES:
        raise ValueError(f"expected a secret of at least {SECRET_BYTES} bytes, got {size}")


def optional_secret(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An attrs validator: like `secret`, with empty meaning none is set."""
    if value:
        secret(_, attribute, value)
