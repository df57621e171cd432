"""Every AWS client the services make shares one Config: timeouts, retries, keepalive, logging."""

from __future__ import annotations

import json
import logging
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from botocore.exceptions import EndpointConnectionError

from skincare_services import aws
from skincare_services.aws import aws_client
from skincare_services.settings import Settings
from tests.log_records import fields

SERVICES = Path(aws.__file__).parent


def test_the_timeouts_fit_the_long_poll_and_the_lease() -> None:
    # botocore's Config keeps its options as instance attributes its stubs do not declare.
    config = vars(aws.aws_config())
    assert config["retries"] == {"mode": "standard", "total_max_attempts": 3}
    assert config["tcp_keepalive"] is True
    assert config["read_timeout"] > aws.SQS_LONG_POLL_SECONDS
    worst_call = aws.MAX_ATTEMPTS * (config["connect_timeout"] + config["read_timeout"])
    lease = Settings(database_url="x", webhook_secret="x", jwt_secret="x" * 32).visibility_timeout
    assert worst_call < lease.total_seconds()
    # A stall shows within one read timeout, and work resumes within one after it ends.
    assert config["read_timeout"] < 5


@pytest.mark.parametrize("service", ["sqs", "ses", "s3"])
def test_every_client_is_made_on_the_shared_config(service: Literal["sqs", "ses", "s3"]) -> None:
    client = aws_client(service, region_name="us-east-1")
    config = vars(client.meta.config)
    assert config["read_timeout"] == aws.READ_TIMEOUT_SECONDS
    assert config["connect_timeout"] == aws.CONNECT_TIMEOUT_SECONDS
    client.close()


def test_no_other_module_of_the_services_makes_a_client() -> None:
    makers = [
        path.name
        for path in SERVICES.rglob("*.py")
        if re.search(r"boto3\.(client|resource)\(", path.read_text()) and path.name != "aws.py"
    ]
    assert makers == []


def test_each_failed_attempt_is_logged_as_it_happens(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = aws_client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    caplog.set_level(logging.WARNING, logger="skincare_services.aws")
    with pytest.raises(EndpointConnectionError):
        client.list_queues()
    records = [r for r in caplog.records if r.getMessage() == "aws.attempt_failed"]
    assert [fields(r, "aws_service", "operation", "attempt") for r in records] == [
        ("sqs", "ListQueues", n) for n in (1, 2, 3)
    ]
    assert "Could not connect" in str(fields(records[0], "error")[0])
    client.close()


STUBS_PROBE = """
import json, pkgutil, sys, importlib
import skincare_email.ses, skincare_invoice.s3, skincare_services.compose, skincare_services.aws
import skincare_services.backends
import skincare_sqs
for module in pkgutil.walk_packages(skincare_sqs.__path__, "skincare_sqs."):
    importlib.import_module(module.name)
print(json.dumps(sorted(sys.modules)))
"""


def test_the_boto3_stubs_are_for_type_checking_only() -> None:
    # The stubs are a dev dependency: an adapter importing them at run time breaks in production.
    done = subprocess.run(
        [sys.executable, "-c", STUBS_PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = {name.split(".")[0] for name in json.loads(done.stdout)}
    assert "boto3" in loaded
    assert sorted(name for name in loaded if name.startswith(("types_boto3", "mypy_boto3"))) == []
