"""Leases extended ten at a time: one ChangeMessageVisibilityBatch per ten running jobs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from skincare_sqs.acks import BATCH_LIMIT
from skincare_sqs.calls import STALE_RECEIPT_CODES, call
from skincare_sqs.errors import SqsUnavailable

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef


async def extend_leases(
    client: SQSClient, queue_url: str, receipts: Sequence[str], seconds: int
) -> None:
    """Make every message of `receipts` invisible for `seconds` more.

    A stale receipt (the lease already lost) is skipped as SQS reports it; any other failure
    raises SqsUnavailable after every batch was tried, so one bad batch costs no other lease.
    """
    failures: list[str] = []
    for start in range(0, len(receipts), BATCH_LIMIT):
        entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
            {"Id": str(n), "ReceiptHandle": receipt, "VisibilityTimeout": seconds}
            for n, receipt in enumerate(receipts[start : start + BATCH_LIMIT])
        ]
        response = await call(
            client.change_message_visibility_batch, QueueUrl=queue_url, Entries=entries
        )
        failures += [
            f"{failure.get('Code')}: {failure.get('Message')}"
            for failure in response.get("Failed", [])
            if failure.get("Code") not in STALE_RECEIPT_CODES
        ]
    if failures:
        raise SqsUnavailable("ChangeMessageVisibilityBatch", failures[0])
