"""The port of the database the SQS backend keeps its jobs' rows in (`JobLedger`).

SQS cannot keep a key unique, remove a message before handing it out, or delay one past 15
minutes. So each job has a row from the enqueue until it ends, in the database that holds the
outbox (skincare-postgres implements this as `PostgresJobLedger`):

- a job due within 15 minutes is added, sent with DelaySeconds, and marked `sent`; one due later
  waits in the outbox and the relay sends it once it is due within 15 minutes;
- a unique key is held by the row while the job waits, is scheduled or runs (received), until
  it is acked or dead: a key is free again only when its job has ended, as on every backend;
- receiving marks the rows `running`; a job cancelled after it was sent is acked unrun;
- cancel deletes an unsent row, or turns a sent (not running) one into a tombstone;
- a job's end (acked: done; dead-lettered: failed) is counted per named queue and minute in the
  statement that drops its row, and read back as the backend's `JobOutcomes`; a received body
  that is no job (no row) is counted failed when it is moved to the DLQ.

It is a port of this adapter, not of the engine: only the SQS backend needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.outcomes import JobOutcomes
from skincare_core.jobs.ports import OutboxStorage


class JobLedger(OutboxStorage, JobOutcomes, Protocol):
    """The outbox rows the relay sends, kept as the jobs' ledger until each job ends, and the
    count of the jobs that ended."""

    async def add(self, envelope: Envelope, *, send_now: bool) -> str | None:
        """Store the job's row unless a live job holds its key (None); with `send_now` leased
        to the caller, who sends it and passes the receipt to `mark_sent` or `forget`."""

    async def forget(self, receipt: str) -> None:
        """The caller could not send the job it added: drop the row."""

    async def start(self, job_ids: Sequence[str]) -> set[str]:
        """Received jobs are running; returns the cancelled ones (to ack unrun)."""

    async def retry(self, job_id: str) -> None:
        """A received job waits in SQS again (nack)."""

    async def finish(self, job_ids: Sequence[str], *, queue: str, failed: bool) -> None:
        """These jobs of `queue` were acked (or, `failed`, went dead): their rows and keys go,
        and they count as done (or failed) in one statement."""

    async def count_dead(self, queue: str, count: int) -> None:
        """`count` messages of `queue` that were no job (no row) went to the DLQ: counted
        failed."""

    async def cancel(self, job_id: str, queue: str) -> bool:
        """Cancel an unsent, waiting or scheduled job of `queue`; whether one was cancelled."""

    async def resent(self, jobs: Sequence[tuple[str, str, str]]) -> None:
        """These (id, type, queue) jobs were sent back from the dead letters, without keys."""
