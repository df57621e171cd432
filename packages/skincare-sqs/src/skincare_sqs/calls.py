"""Every boto3 SQS call in a worker thread, with AWS errors translated to SqsUnavailable."""

from __future__ import annotations

import functools
import logging
from typing import Any

import anyio
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from skincare_sqs.errors import SqsUnavailable

logger = logging.getLogger(__name__)

# What SQS answers when a receipt handle no longer holds the lease.
STALE_RECEIPT_CODES = frozenset(
    {
        "ReceiptHandleIsInvalid",
        "InvalidParameterValue",
        "MessageNotInflight",
        "AWS.SimpleQueueService.MessageNotInflight",
    }
)

Response = dict[str, Any]


def error_code(exc: ClientError) -> str:
    """The AWS error code of a ClientError ('' when absent)."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def call_blocking(client: Any, operation: str, **kwargs: Any) -> Response:
    """`client.<operation>(**kwargs)` in this thread; SqsUnavailable on AWS errors."""
    try:
        result: Response = getattr(client, operation)(**kwargs)
    except ClientError as exc:
        raise SqsUnavailable(operation, f"{error_code(exc)}: {exc}") from exc
    # ConnectionError covers refused, connect timeout, proxy and TLS failures; HTTPClientError
    # read timeouts and dropped connections.
    except (BotocoreConnectionError, HTTPClientError) as exc:
        raise SqsUnavailable(operation, repr(exc)) from exc
    return result


async def call(client: Any, operation: str, **kwargs: Any) -> Response:
    """`call_blocking` in a worker thread, so the event loop never blocks on boto3."""
    blocking = functools.partial(call_blocking, client, operation, **kwargs)
    return await anyio.to_thread.run_sync(blocking)


async def call_on_receipt(client: Any, operation: str, **kwargs: Any) -> Response | None:
    """Like `call`, for an operation on a receipt: None when SQS says the receipt is stale."""
    try:
        return await call(client, operation, **kwargs)
    except SqsUnavailable as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and error_code(cause) in STALE_RECEIPT_CODES:
            logger.info("sqs.stale_receipt", extra={"operation": operation, "code": exc.reason})
            return None
        raise
