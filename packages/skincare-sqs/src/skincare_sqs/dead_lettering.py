"""Moving a received message to the DLQ: its body as received, stamped with why it died."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from skincare_sqs.errors import SqsUnavailable
from skincare_sqs.leases import Leases
from skincare_sqs.moves import move
from skincare_sqs.stamps import stamped
from skincare_sqs.wire import Attributes, SqsMessage, receive_count

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

logger = logging.getLogger(__name__)


class DeadLettering:
    """Sends received messages of one source queue to its DLQ."""

    def __init__(self, client: SQSClient, *, queue_url: str, dlq_url: str, leases: Leases) -> None:
        self._client = client
        self._queue_url = queue_url
        self._dlq_url = dlq_url
        self._leases = leases

    async def move(
        self,
        receipt: str,
        body: str,
        names: Attributes,
        *,
        reason: str,
        attempts: int,
        message_id: str,
    ) -> bool:
        """Send `body` with `names` and the stamp to the DLQ, then delete the message; False
        when it cannot be stamped (too large: it stays, for the redrive policy)."""
        now = datetime.now(UTC)
        attributes = stamped(
            body, names, reason=reason, attempts=attempts, message_id=message_id, dead_at=now
        )
        if attributes is None:
            fields = {"message_id": message_id, "error": reason, "body_bytes": len(body.encode())}
            logger.error("sqs.dead_letter_too_large", extra=fields)
            return False
        await move(
            self._client,
            body=body,
            attributes=attributes,
            to_url=self._dlq_url,
            from_url=self._queue_url,
            receipt=receipt,
        )
        self._leases.forget(receipt)
        return True

    async def reject(self, raw: SqsMessage, reason: str) -> bool:
        """A received body that is no job dies at its first delivery; whether it was moved.

        If SQS refuses the move, the message comes back later and the redrive policy is the
        last resort; the other messages of the same receive are not held up.
        """
        message_id = raw["MessageId"]
        logger.error("sqs.invalid_body", extra={"message_id": message_id, "error": reason})
        try:
            return await self.move(
                raw["ReceiptHandle"],
                raw["Body"],
                {},
                reason=reason,
                attempts=receive_count(raw),
                message_id=message_id,
            )
        except SqsUnavailable as exc:
            fields = {"message_id": message_id, "error": repr(exc)}
            logger.error("sqs.dead_letter_failed", extra=fields)
            return False
