"""The SQS backend's sink and the relay's view of the outbox.

Both send to the named queues' SQS queues, but a relay's job already has its ledger row (its
key was checked when it was added), while any other caller's job needs one first. The outbox
view remembers which jobs the relay claimed, so the sink sends those as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skincare_core.jobs.envelope import Envelope
from skincare_sqs.ledger import JobLedger
from skincare_sqs.ledgered import enqueue_through
from skincare_sqs.sending import Sender


class RelayedOutbox:
    """The ledger's OutboxStorage, noting the ids of the jobs claimed until they are settled."""

    def __init__(self, ledger: JobLedger) -> None:
        self._ledger = ledger
        self._claimed: dict[str, str] = {}  # handle -> job id

    def claimed(self, job_id: str) -> bool:
        """Whether the relay claimed this job and has not settled it yet."""
        return job_id in self._claimed.values()

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` due rows, as the ledger does."""
        rows = await self._ledger.claim(limit)
        self._claimed |= {handle: envelope.job.id for handle, envelope in rows}
        return rows

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """These jobs are in SQS."""
        await self._ledger.mark_sent(handles)
        self._settle(handles)

    async def release(self, handles: Sequence[str]) -> None:
        """These jobs were not sent: claimable again at once."""
        try:
            await self._ledger.release(handles)
        finally:
            self._settle(handles)

    def _settle(self, handles: Sequence[str]) -> None:
        for handle in handles:
            self._claimed.pop(handle, None)


class SqsSink:
    """JobSink over each named queue's SQS queue: a relayed job is sent as it is; any other gets
    its ledger row first (its key checked, a far due time left to the relay)."""

    def __init__(
        self, senders: Mapping[str, Sender], *, ledger: JobLedger, outbox: RelayedOutbox
    ) -> None:
        self._senders = dict(senders)
        self._ledger = ledger
        self._outbox = outbox

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Each envelope to its queue; how many were added. A queue without an SQS queue is a
        ValueError before anything is sent."""
        for envelope in envelopes:
            self._sender(envelope.queue)
        relayed = [e for e in envelopes if self._outbox.claimed(e.job.id)]
        added = 0
        for queue in dict.fromkeys(e.queue for e in relayed):
            added += await self._sender(queue).send_many([e for e in relayed if e.queue == queue])
        for envelope in envelopes:
            if not self._outbox.claimed(envelope.job.id):
                sender = self._sender(envelope.queue)
                added += await enqueue_through(self._ledger, sender, envelope)
        return added

    def _sender(self, queue: str) -> Sender:
        try:
            return self._senders[queue]
        except KeyError:
            known = ", ".join(self._senders)
            raise ValueError(f"no SQS queue for the named queue {queue!r} (has: {known})") from None
