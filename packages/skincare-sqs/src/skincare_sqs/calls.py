"""Every boto3 SQS call in a worker thread, with AWS errors translated to SqsUnavailable.

Callers pass the client's method itself (`call(client.send_message, QueueUrl=...)`), so each
call is checked against the SQS client's types; the translation of errors is here only.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from skincare_sqs.errors import SqsUnavailable

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

# What SQS answers when a receipt handle no longer holds the lease.
STALE_RECEIPT_CODES = frozenset(
    {
        "ReceiptHandleIsInvalid",
        "InvalidParameterValue",
        "MessageNotInflight",
        "AWS.SimpleQueueService.MessageNotInflight",
    }
)


def error_code(exc: ClientError) -> str:
    """The AWS error code of a ClientError ('' when absent)."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def call_blocking(method: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`method(...)` in this thread; SqsUnavailable, naming the operation, on AWS errors."""
    try:
        return method(*args, **kwargs)
    except ClientError as exc:
        raise SqsUnavailable(_operation(method), f"{error_code(exc)}: {exc}") from exc
    # ConnectionError covers refused, connect timeout, proxy and TLS failures; HTTPClientError
    # read timeouts and dropped connections.
    except (BotocoreConnectionError, HTTPClientError) as exc:
        raise SqsUnavailable(_operation(method), repr(exc)) from exc


async def call(method: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`call_blocking` in a worker thread, so the event loop never blocks on boto3."""
    blocking = functools.partial(call_blocking, method, *args, **kwargs)
    return await anyio.to_thread.run_sync(blocking)


async def call_on_receipt(method: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T | None:
    """Like `call`, for an operation on a receipt: None when SQS says the receipt is stale."""
    try:
        return await call(method, *args, **kwargs)
    except SqsUnavailable as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and error_code(cause) in STALE_RECEIPT_CODES:
            extra = {"operation": exc.operation, "code": exc.reason}
            logger.info("sqs.stale_receipt", extra=extra)
            return None
        raise


def _operation(method: Callable[..., object]) -> str:
    # boto3 names each client method for its operation (send_message, receive_message).
    return str(getattr(method, "__name__", "sqs"))
