"""SQS fixtures: a boto3 client on moto's real HTTP server and fresh queues per test."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from skincare_sqs import QueueUrls, ensure_queues

Provision = Callable[..., QueueUrls]


@pytest.fixture(scope="session")
def sqs_client(moto_endpoint: str) -> Any:
    """One thread-safe boto3 SQS client for the session, pointed at moto."""
    return boto3.client("sqs", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def fresh_queues(sqs_client: Any) -> Provision:
    """Provision a uniquely named queue + DLQ (visibility 1 s unless told)."""

    def provision(*, max_receive_count: int = 5, visibility_timeout: int = 1) -> QueueUrls:
        name = f"test-{uuid.uuid4().hex[:12]}"
        return ensure_queues(
            sqs_client,
            name,
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
        )

    return provision
