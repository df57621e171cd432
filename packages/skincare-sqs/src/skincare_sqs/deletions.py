"""DeleteMessageBatch for acks, and which of its entries count as done in the job ledger.

SQS answers a batch entry by entry. Only a deleted entry is a finished job: one refused with a
stale receipt (its lease lapsed, so the message comes back or another consumer holds it) is
not, and one refused for another reason is kept for the ack's retry. Counting every entry sent
counted a redelivered job twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import frozen

from skincare_sqs.calls import STALE_RECEIPT_CODES, call
from skincare_sqs.ledger import JobLedger
from skincare_sqs.received import ReceivedBodies

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        DeleteMessageBatchResultTypeDef,
    )


@frozen
class Answered:
    """The receipts of a DeleteMessageBatch by SQS's answer: `deleted`, `stale` (refused: no
    longer this lease's) and `refused` for another reason (the ack is retried)."""

    deleted: list[str]
    stale: list[str]
    refused: list[str]


def answered(
    entries: Sequence[tuple[str, str]], result: DeleteMessageBatchResultTypeDef
) -> Answered:
    """Sort the (Id, receipt) `entries` of one DeleteMessageBatch by its `result`."""
    receipts = dict(entries)
    failed = {f["Id"]: f.get("Code", "") for f in result.get("Failed", [])}
    stale = [receipts[i] for i, code in failed.items() if code in STALE_RECEIPT_CODES]
    refused = [receipts[i] for i, code in failed.items() if code not in STALE_RECEIPT_CODES]
    deleted = [receipt for i, receipt in entries if i not in failed]
    return Answered(deleted, stale, refused)


class LedgeredDeletes:
    """DeleteMessageBatch on one queue; the jobs it deleted end in the ledger (counted done)."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        queue: str,
        running: ReceivedBodies,
        ledger: JobLedger | None,
    ) -> None:
        self._client = client
        self._queue_url = queue_url
        self._queue = queue
        self._running = running  # receipt -> id of a job the ledger marked running
        self._ledger = ledger

    async def __call__(
        self, entries: list[DeleteMessageBatchRequestEntryTypeDef]
    ) -> DeleteMessageBatchResultTypeDef:
        """Delete the entries' messages; end the deleted ones' jobs in the ledger."""
        result = await call(
            self._client.delete_message_batch, QueueUrl=self._queue_url, Entries=entries
        )
        sorted_out = answered([(e["Id"], e["ReceiptHandle"]) for e in entries], result)
        for receipt in sorted_out.stale:
            self._running.pop(receipt)
        done = [self._running.pop(receipt) for receipt in sorted_out.deleted]
        finished = [job_id for job_id in done if job_id is not None]
        if self._ledger is not None and finished:
            await self._ledger.finish(finished, queue=self._queue, failed=False)
        return result
