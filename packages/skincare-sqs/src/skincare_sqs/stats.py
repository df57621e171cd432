"""The SQS queue's depth by state, from GetQueueAttributes on the source queue and its DLQ."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from skincare_core.jobs.ports import QueueCounts
from skincare_sqs.client import call

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.literals import QueueAttributeNameType

_READY: Final = "ApproximateNumberOfMessages"
_SCHEDULED: Final = "ApproximateNumberOfMessagesDelayed"
_LEASED: Final = "ApproximateNumberOfMessagesNotVisible"


class SqsQueueStats:
    """The QueueStats port on SQS's approximate counts (two GetQueueAttributes calls a named
    queue), of one named queue or added up over the (source, DLQ) url pairs of every one.

    A retried job waiting out its backoff is hidden by a visibility change, so SQS counts it as
    leased, not scheduled. The oldest ready job's age is known only to CloudWatch: None here.
    """

    def __init__(self, client: SQSClient, urls: Mapping[str, tuple[str, str]]) -> None:
        self._client = client
        self._urls = dict(urls)

    async def stats(self, *, queue: str | None = None) -> QueueCounts:
        """The source queues' ready, delayed and in-flight counts; the DLQs' messages as dead
        (of the named `queue` only, if given)."""
        chosen = [u for name, u in self._urls.items() if queue in (None, name)]
        counts = [0, 0, 0, 0]
        for queue_url, dlq_url in chosen:
            source = await self._attributes(queue_url, [_READY, _SCHEDULED, _LEASED])
            dead = await self._attributes(dlq_url, [_READY, _LEASED])
            one = (source[_READY], source[_SCHEDULED], source[_LEASED], sum(dead.values()))
            counts = [total + n for total, n in zip(counts, one, strict=True)]
        ready, scheduled, leased, dead_count = counts
        return QueueCounts(ready, scheduled, leased, dead_count, oldest_ready_age=None)

    async def _attributes(self, url: str, names: list[QueueAttributeNameType]) -> dict[str, int]:
        response = await call(self._client.get_queue_attributes, QueueUrl=url, AttributeNames=names)
        return {name: int(response["Attributes"].get(name, "0")) for name in names}
