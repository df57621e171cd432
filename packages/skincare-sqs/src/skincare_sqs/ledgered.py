"""Enqueueing through the job ledger: the row first (its key checked), then SQS."""

from __future__ import annotations

import anyio

from skincare_core.jobs.envelope import Envelope
from skincare_sqs.ledger import JobLedger
from skincare_sqs.sending import Sender, due_beyond_delay


async def enqueue_through(ledger: JobLedger, sender: Sender, envelope: Envelope) -> bool:
    """Add the job's row and, when it is due within 15 minutes, send it now (the relay sends a
    later one when it is due); False when a live job holds its key. A failed send drops the row
    again: the job was not enqueued."""
    if due_beyond_delay(envelope.not_before):
        return await ledger.add(envelope, send_now=False) is not None
    receipt = await ledger.add(envelope, send_now=True)
    if receipt is None:
        return False
    try:
        await sender.send(envelope.job, envelope.not_before)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await ledger.forget(receipt)
        raise
    await ledger.mark_sent([receipt])
    return True
