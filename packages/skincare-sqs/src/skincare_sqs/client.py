"""The SQS requests: every boto3 call in a worker thread with AWS errors as `SqsUnavailable`,
and sending jobs to a queue (SendMessage, SendMessageBatch).

Callers pass the client's method itself (`call(client.send_message, QueueUrl=...)`), so each
call is checked against the SQS client's types; the translation of errors is here only.
"""

from __future__ import annotations

import builtins
import functools
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import anyio
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from skincare_core.jobs.envelope import Envelope, due_at
from skincare_core.jobs.errors import Unavailable
from skincare_sqs.wire import job_attributes, visibility_seconds

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

logger = logging.getLogger(__name__)

BATCH_LIMIT = 10
"""The most entries SQS takes in one batch request."""
MAX_DELAY = timedelta(minutes=15)
"""SQS's DelaySeconds limit."""

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


class SqsUnavailable(Unavailable):
    """SQS refused or could not be reached, after botocore's own retries."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"SQS {operation} failed: {reason}")
        self.operation = operation
        self.reason = reason


class Sender:
    """Sends to `queue_url`, each message hidden until its job is due (at most 15 minutes)."""

    def __init__(self, client: SQSClient, queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    async def send(self, envelope: Envelope, due: datetime | None) -> None:
        """The envelope's body, due then; a due time more than 15 minutes away is a ValueError
        before any request."""
        seconds = delay_seconds(due, strict=True)
        await call(
            self._client.send_message,
            QueueUrl=self._queue_url,
            MessageBody=envelope.body,
            MessageAttributes=job_attributes(envelope.job),
            DelaySeconds=seconds,
        )

    async def send_many(self, envelopes: Sequence[Envelope]) -> int:
        """The envelopes' bodies, ten a request, delays capped at 15 minutes; returns how many
        were sent."""
        at = now()
        entries: builtins.list[SendMessageBatchRequestEntryTypeDef] = [
            {
                "Id": str(n),
                "MessageBody": e.body,
                "MessageAttributes": job_attributes(e.job),
                "DelaySeconds": delay_seconds(due_at(e, at), strict=False),
            }
            for n, e in enumerate(envelopes)
        ]
        for start in range(0, len(entries), BATCH_LIMIT):
            response = await call(
                self._client.send_message_batch,
                QueueUrl=self._queue_url,
                Entries=entries[start : start + BATCH_LIMIT],
            )
            if failed := response.get("Failed"):
                raise SqsUnavailable("SendMessageBatch", f"{len(failed)} entries failed: {failed}")
        return len(entries)


def now() -> datetime:
    """The current time, UTC."""
    return datetime.now(UTC)


def due_beyond_delay(due: datetime | None) -> bool:
    """Whether a job due then is further away than SQS can delay a message."""
    return due is not None and due - now() > MAX_DELAY


def delay_seconds(due: datetime | None, *, strict: bool) -> int:
    """DelaySeconds for a job due then (0 if due); past 15 minutes a ValueError if `strict`,
    else 15 minutes."""
    if due is None:
        return 0
    wait = due - now()
    if strict and wait > MAX_DELAY:
        raise ValueError(f"SQS delays a message by at most {MAX_DELAY}, asked for {wait}")
    return visibility_seconds(min(max(wait, timedelta(0)), MAX_DELAY))
