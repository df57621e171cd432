"""The SQS queue's depth by state, from GetQueueAttributes on the source queue and its DLQ."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from skincare_core.jobs.ports import QueueCounts
from skincare_sqs.calls import call

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.literals import QueueAttributeNameType

_READY: Final = "ApproximateNumberOfMessages"
_SCHEDULED: Final = "ApproximateNumberOfMessagesDelayed"
_LEASED: Final = "ApproximateNumberOfMessagesNotVisible"


class SqsQueueStats:
    """The QueueStats port on SQS's approximate counts (two GetQueueAttributes calls).

    A retried job waiting out its backoff is hidden by a visibility change, so SQS counts it as
    leased, not scheduled. The oldest ready job's age is known only to CloudWatch: None here.
    """

    def __init__(self, client: SQSClient, *, queue_url: str, dlq_url: str) -> None:
        self._client = client
        self._queue_url = queue_url
        self._dlq_url = dlq_url

    async def stats(self) -> QueueCounts:
        """The source queue's ready, delayed and in-flight counts; the DLQ's messages as dead."""
        source = await self._attributes(self._queue_url, [_READY, _SCHEDULED, _LEASED])
        dead = await self._attributes(self._dlq_url, [_READY, _LEASED])
        return QueueCounts(
            ready=source[_READY],
            scheduled=source[_SCHEDULED],
            leased=source[_LEASED],
            dead=dead[_READY] + dead[_LEASED],
            oldest_ready_age=None,
        )

    async def _attributes(self, url: str, names: list[QueueAttributeNameType]) -> dict[str, int]:
        response = await call(self._client.get_queue_attributes, QueueUrl=url, AttributeNames=names)
        return {name: int(response["Attributes"].get(name, "0")) for name in names}
