"""The dead-letter queues: moving a received message to its DLQ (its body as received, stamped
with why it died), and the operator's view of the DLQs (count, list, get, redrive, purge).

moto has no StartMessageMoveTask, so redrive is receive -> send to the source -> delete, which is
safe to interrupt: a message leaves the DLQ only after the source queue has it. Reading the DLQ
stamps what the redrive policy moved (see `skincare_sqs.wire`): a stamped copy replaces it.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from skincare_core.jobs.ports import DeadLetter, DeadLetters
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_sqs.client import BATCH_LIMIT, SqsUnavailable, call, call_on_receipt
from skincare_sqs.ledger import JobLedger
from skincare_sqs.wire import (
    Attributes,
    SqsMessage,
    attribute,
    dead_letter_of,
    first_look_stamp,
    has_stamp,
    job_of,
    receive_count,
    stamped,
    string,
)

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient
    from types_boto3_sqs.literals import QueueAttributeNameType
    from types_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        DeleteMessageBatchRequestEntryTypeDef,
    )

logger = logging.getLogger(__name__)


async def move(
    client: SQSClient,
    *,
    body: str,
    attributes: Attributes,
    to_url: str,
    from_url: str,
    receipt: str,
) -> None:
    """Send `body` with `attributes` to `to_url`, then delete the message of `receipt`.

    Send first, delete second: an interruption in between leaves a copy, never a loss.
    """
    await call(client.send_message, QueueUrl=to_url, MessageBody=body, MessageAttributes=attributes)
    await call_on_receipt(client.delete_message, QueueUrl=from_url, ReceiptHandle=receipt)


class DeadLettering:
    """Sends received messages of one source queue to its DLQ."""

    def __init__(self, client: SQSClient, *, queue_url: str, dlq_url: str) -> None:
        self._client = client
        self._queue_url = queue_url
        self._dlq_url = dlq_url

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


class SqsDeadLetters:
    """The operator's view of the DLQ of one source queue, the named queue `name`. A redriven job
    is recorded in the `ledger` (if any) before it is sent: in SQS again, holding no key."""

    def __init__(
        self,
        client: SQSClient,
        *,
        queue_url: str,
        dlq_url: str,
        hold_seconds: int,
        name: str = DEFAULT_QUEUE,
        ledger: JobLedger | None = None,
    ) -> None:
        self._client = client
        self._queue_url = queue_url
        self._dlq_url = dlq_url
        self._hold = hold_seconds
        self._name = name
        self._ledger = ledger

    async def count(self, *, queue: str | None = None) -> int:
        """Visible plus in-flight messages of the DLQ (SQS's approximate counts); `queue`
        another named queue: 0."""
        if queue not in (None, self._name):
            return 0
        names: list[QueueAttributeNameType] = [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
        ]
        response = await call(
            self._client.get_queue_attributes, QueueUrl=self._dlq_url, AttributeNames=names
        )
        return sum(int(response["Attributes"].get(name, "0")) for name in names)

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> builtins.list[DeadLetter]:
        """Dead jobs, oldest first; the messages are released again at once."""
        if queue not in (None, self._name):
            return []
        messages = await self._stamp_or_release(await self._take_all())
        dead = sorted((self._dead_letter(m) for m in messages), key=lambda d: d.dead_at)
        return [d for d in dead if job_type is None or d.job.type == job_type][:limit]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id: the DLQ is read until it turns up, then released again."""
        taken = await self._take_all(until=lambda m: _job_id(m) == job_id)
        messages = await self._stamp_or_release(taken)
        found = [m for m in messages if _job_id(m) == job_id]
        return self._dead_letter(found[0]) if found else None

    async def redrive(self, job_id: str) -> bool:
        """Send the dead job(s) with this id back to the source queue."""
        return await self._redrive_where(lambda m: _job_id(m) == job_id) > 0

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Send every dead job (of `job_type`) back; returns how many."""
        if queue not in (None, self._name):
            return 0
        return await self._redrive_where(lambda m: job_type in (None, job_of(m).type))

    async def purge(self) -> int:
        """Delete every dead message; returns how many."""
        messages = await self._take_all()
        await self._delete(messages)
        return len(messages)

    async def _redrive_where(self, wanted: Callable[[SqsMessage], bool]) -> int:
        messages = await self._take_all()
        chosen = [m for m in messages if wanted(m)]
        await self._stamp_or_release([m for m in messages if not wanted(m)])
        if self._ledger is not None:
            jobs = [job_of(m) for m in chosen]
            await self._ledger.resent([(job.id, job.type, self._name) for job in jobs])
        for message in chosen:
            # A new message in the source queue: its receive count, so attempts, starts at 0.
            await self._move(message, _job_attributes(message), to_url=self._queue_url)
        return len(chosen)

    def _dead_letter(self, message: SqsMessage) -> DeadLetter:
        return attrs.evolve(dead_letter_of(message), queue=self._name)

    async def _stamp_or_release(
        self, messages: builtins.list[SqsMessage]
    ) -> builtins.list[SqsMessage]:
        """Stamped copies replace the unstamped messages; the rest are released. Returns the
        messages as they now are in the DLQ."""
        now_in_dlq, release = [], []
        for message in messages:
            stamp = None if has_stamp(message) else first_look_stamp(message)
            if stamp is None:
                release.append(message)
                now_in_dlq.append(message)
            else:
                await self._move(message, stamp, to_url=self._dlq_url)
                now_in_dlq.append({**message, "MessageAttributes": stamp, "Attributes": {}})
        await self._release(release)
        return now_in_dlq

    async def _move(self, message: SqsMessage, attributes: Attributes, *, to_url: str) -> None:
        await move(
            self._client,
            body=message["Body"],
            attributes=attributes,
            to_url=to_url,
            from_url=self._dlq_url,
            receipt=message["ReceiptHandle"],
        )

    async def _take_all(
        self, *, until: Callable[[SqsMessage], bool] = lambda _: False
    ) -> builtins.list[SqsMessage]:
        # Each received message stays hidden for the hold, so the next receive gets others.
        # SQS has no lookup by id: `until` stops the reading once the wanted message came.
        taken: builtins.list[SqsMessage] = []
        while True:
            response = await call(
                self._client.receive_message,
                QueueUrl=self._dlq_url,
                MaxNumberOfMessages=BATCH_LIMIT,
                WaitTimeSeconds=0,
                VisibilityTimeout=self._hold,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
            )
            batch = response.get("Messages", [])
            taken += batch
            if not batch or any(map(until, batch)):
                return taken

    async def _release(self, messages: builtins.list[SqsMessage]) -> None:
        for start in range(0, len(messages), BATCH_LIMIT):
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                for n, m in enumerate(messages[start : start + BATCH_LIMIT])
            ]
            await call(
                self._client.change_message_visibility_batch,
                QueueUrl=self._dlq_url,
                Entries=entries,
            )

    async def _delete(self, messages: builtins.list[SqsMessage]) -> None:
        for start in range(0, len(messages), BATCH_LIMIT):
            entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]}
                for n, m in enumerate(messages[start : start + BATCH_LIMIT])
            ]
            await call(self._client.delete_message_batch, QueueUrl=self._dlq_url, Entries=entries)


def _job_id(message: SqsMessage) -> str:
    return job_of(message).id


def _job_attributes(message: SqsMessage) -> Attributes:
    return {
        name: string(value)
        for name in ("job_id", "job_type")
        if (value := attribute(message, name)) is not None
    }


class EveryDeadLetter:
    """DeadLetters over each named queue's own (name -> its DLQ's view); `queue` picks one."""

    def __init__(self, per_queue: Mapping[str, DeadLetters]) -> None:
        self._per_queue = dict(per_queue)

    async def count(self, *, queue: str | None = None) -> int:
        """How many jobs are dead (in one queue): SQS's approximate counts, added up."""
        return sum([await dlq.count() for dlq in self._chosen(queue)])

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> builtins.list[DeadLetter]:
        """Dead jobs of every (or one) queue, oldest first."""
        found = [dead for dlq in self._chosen(queue) for dead in await dlq.list(job_type=job_type)]
        return sorted(found, key=lambda dead: dead.dead_at)[:limit]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id, in whichever queue it died."""
        for dlq in self._per_queue.values():
            if (dead := await dlq.get(job_id)) is not None:
                return dead
        return None

    async def redrive(self, job_id: str) -> bool:
        """Send the dead job back to the queue it died in; False if no queue has it dead."""
        for dlq in self._per_queue.values():
            if await dlq.redrive(job_id):
                return True
        return False

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Send every dead job (of one type, of one queue) back to its queue; how many."""
        return sum([await dlq.redrive_all(job_type=job_type) for dlq in self._chosen(queue)])

    async def purge(self) -> int:
        """Delete every dead job of every queue; how many."""
        return sum([await dlq.purge() for dlq in self._per_queue.values()])

    def _chosen(self, queue: str | None) -> builtins.list[DeadLetters]:
        if queue is None:
            return list(self._per_queue.values())
        return [self._per_queue[queue]] if queue in self._per_queue else []
