"""The real `skincare` process on bad input and dead services: one line on stderr naming the
problem, a documented exit code, never a traceback; and commands that need only a secret run
without the database's settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from skincare_services.local import free_port

pytestmark = pytest.mark.slow
SECRETS = {"SKINCARE_JWT_SECRET": "j" * 32, "SKINCARE_WEBHOOK_SECRET": "w" * 32}


def skincare(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `skincare ARGS` with only `env` of the SKINCARE_* and AWS_* variables."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("SKINCARE_", "AWS_"))}
    command = [sys.executable, "-m", "skincare_services.cli.main", *args]
    return subprocess.run(
        command, env={**inherited, **env}, capture_output=True, text=True, timeout=120
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], code: int, says: str) -> None:
    """Exit `code`, nothing on stdout, and on stderr one error line after any JSON log lines."""
    assert done.returncode == code, (done.stdout, done.stderr)
    assert done.stdout == ""
    *logs, line = done.stderr.splitlines()
    assert line.startswith("skincare: ")
    assert says in line
    assert [json.loads(log)["service"] for log in logs] == ["cli"] * len(logs)


def unreachable_database() -> dict[str, str]:
    """Settings whose database refuses connections (nothing listens on the port)."""
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/postgres"
    return {**SECRETS, "SKINCARE_DATABASE_URL": url}


@pytest.mark.parametrize(
    "command", [["dlq", "count"], ["dlq", "list", "--json"], ["queue", "stats"], ["migrate"]]
)
def test_an_unreachable_database_is_one_line_and_exit_3(command: list[str]) -> None:
    done = skincare(*command, **unreachable_database())
    assert_one_line_error(done, 3, "database unavailable")


def test_an_unreachable_sqs_is_one_line_and_exit_3() -> None:
    sqs = {
        "SKINCARE_QUEUE": "sqs",
        "SKINCARE_SQS_QUEUE_PREFIX": "jobs",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_MAX_ATTEMPTS": "1",
    }
    done = skincare("queue", "stats", "--json", **unreachable_database(), **sqs)
    assert_one_line_error(done, 3, "SQS get_queue_url failed")


def test_bad_json_to_webhook_sign_is_one_line_and_exit_2() -> None:
    done = skincare("webhook", "sign", '{"event_id": ', **SECRETS)
    assert_one_line_error(done, 2, "the webhook body is not JSON")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["dlq", "redrive", "job-1", "--all"], "Exactly 1 of"),
        (["dlq", "purge"], "--yes"),
        (["dlq", "count", "--max", "many"], "--max"),
        (["queue", "stats", "--colour"], "--colour"),
        (["nonsense"], "nonsense"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    assert_one_line_error(skincare(*args), 2, says)


def test_a_missing_setting_names_its_variable_and_exits_2() -> None:
    done = skincare("token", "--user-id", "7", SKINCARE_WEBHOOK_SECRET="w" * 32)
    assert_one_line_error(done, 2, "SKINCARE_JWT_SECRET is required")


def test_token_and_webhook_sign_need_only_their_secret() -> None:
    token = skincare("token", "--user-id", "7", SKINCARE_JWT_SECRET="j" * 32)
    assert token.returncode == 0, token.stderr
    assert token.stdout.count(".") == 2
    signed = skincare("webhook", "sign", '{"event_id": "e1"}', "--timestamp", "1700000000",
                      SKINCARE_WEBHOOK_SECRET="w" * 32)  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    assert signed.stdout.startswith("X-Timestamp: 1700000000\nX-Signature: sha256=")


def test_version_and_help() -> None:
    version = skincare("--version")
    assert (version.returncode, version.stdout) == (0, "0.1.0\n")
    helped = skincare("--help")
    assert helped.returncode == 0
    assert "Exit codes:" in helped.stdout
