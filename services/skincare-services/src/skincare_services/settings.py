"""Settings from SKINCARE_* environment variables; a bad value names its variable and exits 2."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Literal, TypeVar

import attrs
import cattrs
from attrs import field, frozen

from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_services.queue_backends import QueueBackend, UnknownBackend, queue_backend
from skincare_services.setting_values import (
    DEFAULT_WORKER_QUEUES,
    NO_JOB_TIMEOUTS,
    NO_RATE_LIMITS,
    JobTimeouts,
    RateLimits,
    WorkerQueues,
    email_address,
    http_url,
    not_negative,
    optional_secret,
    parse_concurrency_caps,
    parse_duration,
    parse_job_timeouts,
    parse_rate_limits,
    parse_worker_queues,
    positive,
    secret,
)

PREFIX = "SKINCARE_"
_SQS_PREFIX = (
    "SKINCARE_SQS_QUEUE_PREFIX: one SQS queue and DLQ per named queue, <prefix>-<queue> and"
    " <prefix>-<queue>-dlq (create them with skincare_sqs.ensure_queues)"
)
_REPLACED = {
    "SKINCARE_WORKER_CONCURRENCY": "SKINCARE_WORKER_QUEUES (e.g. critical=8,default=16,bulk=4)",
    "SKINCARE_SQS_QUEUE_URL": _SQS_PREFIX,
    "SKINCARE_SQS_DLQ_URL": _SQS_PREFIX,
}


class SettingsError(Exception):
    """A missing or bad setting; the message is one line naming the variable."""


@frozen
class Settings:
    """Everything a process can be told; secrets are kept out of repr and logs."""

    database_url: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    jwt_secret: str = field(repr=False, validator=secret)
    jwt_issuer: str = "skincare"
    # Connecting gives up after the first, a statement after the second on the server; the
    # client gives up after both together, so a stalled link is noticed within their sum.
    database_connect_timeout_seconds: int = field(default=5, validator=positive)
    database_statement_timeout_seconds: int = field(default=30, validator=positive)
    # The queue backend: a name registered under `queue_backends.GROUP`, checked on load.
    queue: str = "postgres"
    sqs_queue_prefix: str = ""
    email: Literal["maildir", "smtp", "ses"] = "maildir"
    email_from: str = "Toko Skincare <no-reply@skincare.example>"
    # The shop's admin: gets the daily sales summary at 07:00 Jakarta time; empty: no summary.
    admin_email: str = field(default="", validator=email_address)
    maildir: Path = Path(".skincare/mail")
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 587
    smtp_security: Literal["none", "starttls", "tls"] = "starttls"
    smtp_username: str = ""
    smtp_password: str = field(default="", repr=False)
    invoice_store: Literal["directory", "s3"] = "directory"
    invoice_dir: Path = Path(".skincare/invoices")
    invoice_bucket: str = ""
    worker_queues: WorkerQueues = DEFAULT_WORKER_QUEUES
    rate_limits: RateLimits = NO_RATE_LIMITS
    # Job type -> its own execution timeout; a type not named has the worker's 5 minutes.
    job_timeouts: JobTimeouts = NO_JOB_TIMEOUTS
    # At most N running at once per job type, named queue or shared key, every process counted.
    concurrency_caps: ConcurrencyCaps = NO_CAPS
    payment_window: timedelta = timedelta(hours=24)
    max_attempts: int = field(default=5, validator=positive)
    visibility_timeout_seconds: int = field(default=30, validator=positive)
    shutdown_grace_seconds: int = field(default=25, validator=positive)
    api_host: str = "127.0.0.1"
    api_port: int = field(default=8000, validator=positive)
    # `skincare ops` lets in the bearer of this token (empty: admin JWTs only).
    ops_token: str = field(default="", repr=False, validator=optional_secret)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # The worker's /metrics and /healthz; 0 serves neither (and counts nothing).
    metrics_port: int = field(default=0, validator=not_negative)
    metrics_host: str = "127.0.0.1"
    # /healthz answers 503 once a queue's worker loop has not gone round for this long.
    worker_stale_seconds: int = field(default=60, validator=positive)
    # Tracing (the `otel` extra): spans as JSON lines in <dir>/<service>.jsonl; empty: no tracing.
    trace_dir: str = ""
    # Tracing to an OTLP/HTTP collector at this base URL (spans to <url>/v1/traces); empty: none.
    otlp_endpoint: str = field(default="", validator=http_url)
    # Job history: every job's timeline, kept after it finishes for a retention (done and
    # cancelled ones, dead ones), then pruned by one worker process at a time; off keeps none.
    history: Literal["on", "off"] = "on"
    history_done_retention: timedelta = timedelta(hours=24)
    history_dead_retention: timedelta = timedelta(days=14)

    @property
    def visibility_timeout(self) -> timedelta:
        """The queue lease."""
        return timedelta(seconds=self.visibility_timeout_seconds)

    @property
    def shutdown_grace(self) -> timedelta:
        """How long in-flight jobs get on SIGTERM."""
        return timedelta(seconds=self.shutdown_grace_seconds)


@frozen
class DatabaseSettings:
    """What `skincare migrate` needs: the database, nothing else."""

    database_url: str = field(repr=False)


@frozen
class TokenSettings:
    """What `skincare token` needs: the JWT secret and issuer, nothing else."""

    jwt_secret: str = field(repr=False, validator=secret)
    jwt_issuer: str = "skincare"


@frozen
class WebhookSettings:
    """What `skincare webhook sign` needs: the webhook secret, nothing else."""

    webhook_secret: str = field(repr=False)


T = TypeVar("T", bound=attrs.AttrsInstance)
for _kind in (Settings, DatabaseSettings, TokenSettings, WebhookSettings):
    attrs.resolve_types(_kind)
_converter = cattrs.Converter()
_converter.register_structure_hook(Path, lambda value, _: Path(value))
_converter.register_structure_hook(timedelta, lambda value, _: parse_duration(value))
_converter.register_structure_hook_func(
    lambda kind: kind == WorkerQueues, lambda value, _: parse_worker_queues(value)
)
_converter.register_structure_hook_func(
    lambda kind: kind is RateLimits, lambda value, _: parse_rate_limits(value)
)
_converter.register_structure_hook_func(
    lambda kind: kind is JobTimeouts, lambda value, _: parse_job_timeouts(value)
)
_converter.register_structure_hook(ConcurrencyCaps, lambda value, _: parse_concurrency_caps(value))
_DESCRIPTIONS: dict[object, str] = {
    ConcurrencyCaps: (
        "kind:name=limit pairs like type:send_confirmation_email=2,queue:default=8,"
        "key:smtp-relay=4:send_confirmation_email+send_invoice_email"
    ),
    JobTimeouts: "type=duration pairs like process_payment=30,send_daily_sales_summary=10m",
    WorkerQueues: "queue=concurrency pairs like critical=8,default=16,bulk=4",
    RateLimits: "queue=jobs-per-second pairs like default=14,bulk=2",
    timedelta: "a positive duration like 24h, 30m or 900s",
}
_REQUIRED_WITH = {"s3": ("invoice_bucket",)}


def variable(name: str) -> str:
    """The environment variable of a settings field."""
    return PREFIX + name.upper()


def load_settings(environ: Mapping[str, str]) -> Settings:
    """Read settings; SettingsError (one line, naming the variable) for a missing or bad value."""
    for old, new in _REPLACED.items():
        if environ.get(old):
            raise SettingsError(f"{old} is replaced by {new}")
    settings = load_fields(Settings, environ)
    _check_combinations(settings)
    return settings


def load_fields(kind: type[T], environ: Mapping[str, str]) -> T:
    """Read the fields of the attrs class `kind` from SKINCARE_* variables; SettingsError."""
    values: dict[str, object] = {}
    for attribute in attrs.fields(kind):
        raw = environ.get(variable(attribute.name))
        if raw is None or raw == "":
            if attribute.default is attrs.NOTHING:
                raise SettingsError(f"{variable(attribute.name)} is required but not set")
            continue
        values[attribute.name] = _structure(attribute, raw)
    try:
        return kind(**values)
    except ValueError as exc:
        raise SettingsError(f"invalid settings: {exc}") from None


def _structure(attribute: attrs.Attribute[object], raw: str) -> object:
    name = variable(attribute.name)
    try:
        value = _converter.structure(raw, attribute.type)  # type: ignore[arg-type]
    except Exception:
        raise SettingsError(f"{name}: expected {_describe(attribute.type)}, got {raw!r}") from None
    if attribute.validator is not None:
        try:
            attribute.validator(None, attribute, value)
        except ValueError as exc:
            raise SettingsError(f"{name}: {exc}") from None
    return value


def _describe(kind: object) -> str:
    if kind in _DESCRIPTIONS:
        return _DESCRIPTIONS[kind]
    args = getattr(kind, "__args__", None)
    if args:
        return "one of " + ", ".join(str(a) for a in args)
    names: dict[object, str] = {int: "an integer", str: "text", Path: "a path"}
    return names.get(kind, str(kind))


def _check_combinations(settings: Settings) -> None:
    _require(settings, settings.queue, _queue_backend(settings.queue).required_settings)
    _require(settings, settings.invoice_store, _REQUIRED_WITH.get(settings.invoice_store, ()))


def _require(settings: Settings, trigger: str, names: tuple[str, ...]) -> None:
    for name in names:
        if not getattr(settings, name):
            raise SettingsError(f"{variable(name)} is required when {trigger} is used")


def _queue_backend(name: str) -> QueueBackend:
    try:
        return queue_backend(name)
    except UnknownBackend as exc:
        raise SettingsError(f"{variable('queue')}: {exc}") from None
