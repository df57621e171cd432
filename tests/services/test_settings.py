"""Settings: defaults, types, and one clear line naming a bad or missing variable."""

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_postgres.engine import client_deadline, engine_timeouts
from skincare_services.backends import configured_engine
from skincare_services.settings import (
    DatabaseSettings,
    SettingsError,
    TokenSettings,
    WebhookSettings,
    load_fields,
    load_settings,
)

_QUEUES = (
    "SKINCARE_WORKER_QUEUES: expected queue=concurrency pairs like critical=8,default=16,bulk=4"
)
_WINDOW = "SKINCARE_PAYMENT_WINDOW: expected a positive duration like 24h, 30m or 900s"
JWT_SECRET = "jwtsec-for-the-settings-tests-0123456789"
_SECRET = "expected a secret of at least 32 bytes"
REQUIRED = {
    "SKINCARE_DATABASE_URL": "postgresql+psycopg://u:p@db/shop",
    "SKINCARE_WEBHOOK_SECRET": "whsec",
    "SKINCARE_JWT_SECRET": JWT_SECRET,
}


def test_defaults_match_the_documented_ones() -> None:
    settings = load_settings(REQUIRED)
    assert settings.queue == "postgres"
    assert dict(settings.worker_queues) == {"critical": 8, "default": 16, "bulk": 4}
    assert settings.payment_window == timedelta(hours=24)
    assert settings.max_attempts == 5
    assert settings.visibility_timeout == timedelta(seconds=30)
    assert settings.shutdown_grace == timedelta(seconds=25)
    assert settings.maildir == Path(".skincare/mail")
    assert settings.database_connect_timeout_seconds == 5
    assert settings.database_statement_timeout_seconds == 30


def test_values_are_parsed_into_their_types() -> None:
    env = {
        **REQUIRED,
        "SKINCARE_WORKER_QUEUES": " critical = 2, reports=1 ",
        "SKINCARE_PAYMENT_WINDOW": "90m",
        "SKINCARE_EMAIL": "smtp",
    }
    settings = load_settings(env)
    assert dict(settings.worker_queues) == {"critical": 2, "reports": 1}
    assert (settings.payment_window, settings.email) == (timedelta(minutes=90), "smtp")


@pytest.mark.parametrize(
    ("raw", "window"),
    [("24h", timedelta(hours=24)), ("2d", timedelta(days=2)), ("900", timedelta(seconds=900))],
)
def test_a_payment_window_takes_a_unit(raw: str, window: timedelta) -> None:
    assert load_settings({**REQUIRED, "SKINCARE_PAYMENT_WINDOW": raw}).payment_window == window


_ADMIN = "SKINCARE_ADMIN_EMAIL: expected an e-mail address like admin@example.com"
_OTLP = "SKINCARE_OTLP_ENDPOINT: expected an http(s) URL like http://127.0.0.1:4318"
_CONNECT = "SKINCARE_DATABASE_CONNECT_TIMEOUT_SECONDS"
_STATEMENT = "SKINCARE_DATABASE_STATEMENT_TIMEOUT_SECONDS"
_BY_PREFIX = "is replaced by SKINCARE_SQS_QUEUE_PREFIX: one SQS queue and DLQ per named queue"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SKINCARE_MAX_ATTEMPTS", "many", "SKINCARE_MAX_ATTEMPTS: expected an integer"),
        ("SKINCARE_MAX_ATTEMPTS", "0", "SKINCARE_MAX_ATTEMPTS: expected a positive"),
        ("SKINCARE_WORKER_QUEUES", "critical", f"{_QUEUES}, got 'critical'"),
        ("SKINCARE_WORKER_QUEUES", "critical=0", f"{_QUEUES}, got 'critical=0'"),
        ("SKINCARE_WORKER_QUEUES", "a=1,a=2", f"{_QUEUES}, got 'a=1,a=2'"),
        ("SKINCARE_WORKER_QUEUES", "Bulk=4", f"{_QUEUES}, got 'Bulk=4'"),
        ("SKINCARE_WORKER_QUEUES", ",", f"{_QUEUES}, got ','"),
        ("SKINCARE_PAYMENT_WINDOW", "soon", f"{_WINDOW}, got 'soon'"),
        ("SKINCARE_PAYMENT_WINDOW", "0h", f"{_WINDOW}, got '0h'"),
        ("SKINCARE_WORKER_CONCURRENCY", "16", "SKINCARE_WORKER_CONCURRENCY is replaced by"),
        ("SKINCARE_QUEUE", "redis", "SKINCARE_QUEUE: expected one of postgres, sqs"),
        ("SKINCARE_QUEUE", "sqs", "SKINCARE_SQS_QUEUE_PREFIX is required when sqs is used"),
        ("SKINCARE_SQS_QUEUE_URL", "http://q", f"SKINCARE_SQS_QUEUE_URL {_BY_PREFIX}"),
        ("SKINCARE_SQS_DLQ_URL", "http://d", f"SKINCARE_SQS_DLQ_URL {_BY_PREFIX}"),
        ("SKINCARE_ADMIN_EMAIL", "admin", f"{_ADMIN}, got 'admin'"),
        ("SKINCARE_ADMIN_EMAIL", "a@b@c", f"{_ADMIN}, got 'a@b@c'"),
        ("SKINCARE_ADMIN_EMAIL", "@toko.test", f"{_ADMIN}, got '@toko.test'"),
        ("SKINCARE_ADMIN_EMAIL", "Admin <a@toko.test>", f"{_ADMIN}, got 'Admin <a@toko.test>'"),
        ("SKINCARE_OTLP_ENDPOINT", "127.0.0.1:4318", f"{_OTLP}, got '127.0.0.1:4318'"),
        ("SKINCARE_OTLP_ENDPOINT", "grpc://c:4317", f"{_OTLP}, got 'grpc://c:4317'"),
        (_CONNECT, "0", f"{_CONNECT}: expected a positive number, got 0"),
        (_CONNECT, "1.5", f"{_CONNECT}: expected an integer, got '1.5'"),
        (_STATEMENT, "-2", f"{_STATEMENT}: expected a positive number, got -2"),
        (_STATEMENT, "2s", f"{_STATEMENT}: expected an integer, got '2s'"),
    ],
)
def test_a_bad_value_names_its_variable(name: str, value: str, expected: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({**REQUIRED, name: value})
    assert str(caught.value).startswith(expected)
    assert "\n" not in str(caught.value)


def test_the_admin_address_is_optional() -> None:
    assert load_settings(REQUIRED).admin_email == ""
    env = {**REQUIRED, "SKINCARE_ADMIN_EMAIL": "admin@toko.test"}
    assert load_settings(env).admin_email == "admin@toko.test"


def test_a_worker_with_a_bad_admin_address_exits_2_with_one_line() -> None:
    env = {**REQUIRED, "SKINCARE_ADMIN_EMAIL": "admin at toko", "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-m", "skincare_services.worker"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"skincare: {_ADMIN}, got 'admin at toko'"]


def test_a_missing_required_value_names_its_variable() -> None:
    env = {k: v for k, v in REQUIRED.items() if k != "SKINCARE_JWT_SECRET"}
    with pytest.raises(SettingsError, match=r"^SKINCARE_JWT_SECRET is required"):
        load_settings(env)


def test_secrets_stay_out_of_repr() -> None:
    text = repr(load_settings({**REQUIRED, "SKINCARE_SMTP_PASSWORD": "hunter2"}))
    assert "whsec" not in text
    assert "jwtsec" not in text
    assert "hunter2" not in text


@pytest.mark.parametrize("module", ["skincare_services.worker", "skincare_services.api"])
@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        ("SKINCARE_MAX_ATTEMPTS", "-1", "expected a positive number, got -1"),
        (_STATEMENT, "soon", "expected an integer, got 'soon'"),
    ],
)
def test_a_process_with_a_bad_setting_exits_2_with_one_line(
    module: str, name: str, value: str, line: str
) -> None:
    env = {**REQUIRED, name: value, "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-m", module], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"skincare: {name}: {line}"]


@pytest.mark.parametrize("name", ["SKINCARE_JWT_SECRET", "SKINCARE_OPS_TOKEN"])
@pytest.mark.parametrize("value", ["x", "a" * 31, "é" * 15, "🔑" * 7])
def test_a_secret_under_32_bytes_is_refused_without_showing_it(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({**REQUIRED, name: value})
    size = len(value.encode())
    assert str(caught.value) == f"{name}: {_SECRET}, got {size}"


@pytest.mark.parametrize("value", ["k" * 32, "é" * 16])
def test_a_secret_of_32_bytes_is_accepted(value: str) -> None:
    env = {**REQUIRED, "SKINCARE_JWT_SECRET": value, "SKINCARE_OPS_TOKEN": value}
    settings = load_settings(env)
    assert (settings.jwt_secret, settings.ops_token) == (value, value)
    assert load_settings(REQUIRED).ops_token == ""
    with pytest.raises(SettingsError, match=f"^SKINCARE_JWT_SECRET: {_SECRET}, got 3$"):
        load_fields(TokenSettings, {"SKINCARE_JWT_SECRET": "abc"})


@pytest.mark.parametrize("name", ["SKINCARE_JWT_SECRET", "SKINCARE_OPS_TOKEN"])
def test_a_process_with_a_short_secret_exits_2_with_one_line(name: str) -> None:
    env = {**REQUIRED, name: "short", "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-m", "skincare_services.api"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"skincare: {name}: {_SECRET}, got 5"]


def test_the_database_timeouts_reach_the_engine_and_its_own_connections() -> None:
    env = {**REQUIRED, _CONNECT: "1", _STATEMENT: "2"}
    engine = configured_engine(load_settings(env))
    assert engine_timeouts(engine) == (timedelta(seconds=1), timedelta(seconds=2))
    assert client_deadline(engine) == 3.0


def test_a_command_reads_only_the_settings_it_uses() -> None:
    token = load_fields(TokenSettings, {"SKINCARE_JWT_SECRET": JWT_SECRET})
    assert (token.jwt_secret, token.jwt_issuer) == (JWT_SECRET, "skincare")
    webhook = load_fields(WebhookSettings, {"SKINCARE_WEBHOOK_SECRET": "whsec"})
    assert webhook.webhook_secret == "whsec"
    database = load_fields(DatabaseSettings, {"SKINCARE_DATABASE_URL": "postgresql://db/shop"})
    assert database.database_url == "postgresql://db/shop"
    with pytest.raises(SettingsError, match=r"^SKINCARE_JWT_SECRET is required but not set$"):
        load_fields(TokenSettings, REQUIRED | {"SKINCARE_JWT_SECRET": ""})


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_-]{0,39}", fullmatch=True),
        st.integers(min_value=1, max_value=10_000),
        min_size=1,
        max_size=6,
    )
)
def test_any_set_of_queues_reads_back_as_written(queues: dict[str, int]) -> None:
    raw = ",".join(f"{name}={count}" for name, count in queues.items())
    settings = load_settings({**REQUIRED, "SKINCARE_WORKER_QUEUES": raw})
    assert dict(settings.worker_queues) == queues
