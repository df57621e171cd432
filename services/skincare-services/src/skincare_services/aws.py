"""Every boto3 client the services make (SQS, SES, S3), on one botocore Config.

An endpoint that accepts connections and never answers must not freeze a process: an attempt
gives up after CONNECT_TIMEOUT + READ_TIMEOUT seconds, botocore retries in standard mode, and
each failed attempt is logged at once (`aws.attempt_failed`), so a stall shows within
READ_TIMEOUT. A request already sent to a stalled endpoint is lost with it, so READ_TIMEOUT also
bounds how late work resumes once the endpoint is back.

The SQS long poll therefore stays short: an empty ReceiveMessage answers only after
WaitTimeSeconds, which READ_TIMEOUT must exceed. An idle worker polls once a second (about 2.6
million requests a month); pickup is not delayed, a long poll returns as soon as a message
arrives. One call's worst case, MAX_ATTEMPTS x (CONNECT_TIMEOUT + READ_TIMEOUT) = 15 s, stays
below the 30 s visibility timeout, so a heartbeat or ack that is retried lands within the lease.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack, overload

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from botocore.awsrequest import AWSResponse
    from botocore.model import OperationModel
    from types_boto3_s3.client import S3Client
    from types_boto3_ses.client import SESClient
    from types_boto3_sqs.client import SQSClient

logger = logging.getLogger(__name__)

SQS_LONG_POLL_SECONDS = 1
CONNECT_TIMEOUT_SECONDS = 2
READ_TIMEOUT_SECONDS = SQS_LONG_POLL_SECONDS + 2
MAX_ATTEMPTS = 3


def aws_config() -> Config:
    """Timeouts, standard-mode retries and TCP keepalive for every AWS client."""
    return Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
        tcp_keepalive=True,
    )


class ClientOptions(TypedDict, total=False):
    """What local runs and tests pass to `boto3.client`; production reads the environment."""

    endpoint_url: str
    region_name: str
    aws_access_key_id: str
    aws_secret_access_key: str


@overload
def aws_client(service: Literal["sqs"], **options: Unpack[ClientOptions]) -> SQSClient: ...
@overload
def aws_client(service: Literal["ses"], **options: Unpack[ClientOptions]) -> SESClient: ...
@overload
def aws_client(service: Literal["s3"], **options: Unpack[ClientOptions]) -> S3Client: ...
def aws_client(
    service: Literal["sqs", "ses", "s3"], **options: Unpack[ClientOptions]
) -> SQSClient | SESClient | S3Client:
    """A boto3 client for `service` on `aws_config()`, logging each failed attempt.

    `options` go to `boto3.client` (an endpoint or credentials for local runs); the region,
    credentials and `AWS_ENDPOINT_URL` otherwise come from the standard AWS environment.
    """
    client = boto3.client(service, config=aws_config(), **options)
    client.meta.events.register("needs-retry", _log_failed_attempt)
    return client


def _log_failed_attempt(
    *,
    attempts: int,
    operation: OperationModel,
    caught_exception: Exception | None = None,
    response: tuple[AWSResponse, object] | None = None,
    **_: object,
) -> None:
    # Runs beside botocore's retry handler and returns None, so it never changes a retry.
    status = response[0].status_code if response is not None else None
    if caught_exception is None and (status is None or status < 500):
        return
    fields = {
        # Not "service": every log line's `service` is the process (api, worker, cli).
        "aws_service": operation.service_model.service_name,
        "operation": operation.name,
        "attempt": attempts,
        "error": repr(caught_exception) if caught_exception is not None else f"HTTP {status}",
    }
    logger.warning("aws.attempt_failed", extra=fields)
