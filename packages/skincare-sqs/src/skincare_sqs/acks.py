"""Acks gathered into DeleteMessageBatch calls: one request for up to ten acks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

import anyio
from attrs import define, field

from skincare_sqs.calls import STALE_RECEIPT_CODES
from skincare_sqs.errors import SqsUnavailable

if TYPE_CHECKING:
    from types_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        DeleteMessageBatchResultTypeDef,
    )

BATCH_LIMIT = 10
# Quoted: the SQS stubs are there for type checking only.
DeleteBatch: TypeAlias = (
    "Callable[[list[DeleteMessageBatchRequestEntryTypeDef]], "
    "Awaitable[DeleteMessageBatchResultTypeDef]]"
)


@define
class _Pending:
    receipt: str
    done: anyio.Event = field(factory=anyio.Event)
    error: Exception | None = None


class AckBatcher:
    """Each ack waits for the flush that carries it; the first ack of a burst flushes."""

    def __init__(self, delete_batch: DeleteBatch, linger: float) -> None:
        self._delete_batch = delete_batch
        self._linger = linger
        self._pending: list[_Pending] = []
        self._flushing = False

    async def ack(self, receipt: str) -> None:
        """Delete the message of `receipt`; a stale receipt is ignored by SQS's answer."""
        await self.ack_many([receipt])

    async def ack_many(self, receipts: Sequence[str]) -> None:
        """Delete every message of `receipts`; raises the first error once all are settled."""
        entries = [_Pending(receipt) for receipt in receipts]
        if not entries:
            return
        self._pending.extend(entries)
        if not self._flushing:
            await self._flush()
        for entry in entries:
            await entry.done.wait()
        if errors := [entry.error for entry in entries if entry.error is not None]:
            raise errors[0]

    async def _flush(self) -> None:
        # Shielded: other acks wait on this flush, so it must not be abandoned halfway.
        self._flushing = True
        try:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(self._linger)
                while self._pending:
                    batch = self._pending[:BATCH_LIMIT]
                    del self._pending[:BATCH_LIMIT]
                    await self._send(batch)
        finally:
            self._flushing = False

    async def _send(self, batch: list[_Pending]) -> None:
        entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
            {"Id": str(n), "ReceiptHandle": p.receipt} for n, p in enumerate(batch)
        ]
        try:
            response = await self._delete_batch(entries)
        except Exception as exc:
            for pending in batch:
                pending.error = exc
                pending.done.set()
            return
        for failure in response.get("Failed", []):
            if failure.get("Code") not in STALE_RECEIPT_CODES:
                reason = f"{failure.get('Code')}: {failure.get('Message')}"
                batch[int(failure["Id"])].error = SqsUnavailable("DeleteMessageBatch", reason)
        for pending in batch:
            pending.done.set()
