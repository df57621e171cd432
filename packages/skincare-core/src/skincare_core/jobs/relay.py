"""The outbox relay: forwards committed outbox jobs to a queue (used when the queue is SQS)."""

from __future__ import annotations

import logging
from datetime import timedelta

import anyio

from skincare_core.jobs.ports import JobSink, OutboxStorage

logger = logging.getLogger(__name__)


class OutboxRelay:
    """Claim, send, mark sent. A crash between send and mark re-sends: handlers are idempotent."""

    def __init__(
        self,
        *,
        storage: OutboxStorage,
        sink: JobSink,
        batch_size: int = 10,
        idle_wait: timedelta = timedelta(milliseconds=200),
        error_wait: timedelta = timedelta(seconds=1),
    ) -> None:
        self._storage = storage
        self._sink = sink
        self._batch = batch_size
        self._idle = idle_wait.total_seconds()
        self._error_wait = error_wait.total_seconds()

    async def relay_once(self) -> int:
        """Forward one batch; returns how many jobs went out."""
        claimed = await self._storage.claim(self._batch)
        if not claimed:
            return 0
        handles = [handle for handle, _ in claimed]
        try:
            await self._sink.enqueue_many([envelope for _, envelope in claimed])
        except BaseException:
            # Waiting out the claim's lease would delay every job of the batch by it once the
            # queue is back; some may have been sent (a resend is harmless: handlers are
            # idempotent).
            with anyio.CancelScope(shield=True):
                await self._release(handles)
            raise
        await self._storage.mark_sent(handles)
        return len(claimed)

    async def _release(self, handles: list[str]) -> None:
        try:
            await self._storage.release(handles)
        except Exception as exc:
            logger.error("outbox.release_failed", extra={"count": len(handles), "error": repr(exc)})

    async def run(self) -> None:
        """Relay until cancelled; errors (queue unreachable) are logged and retried."""
        while True:
            try:
                sent = await self.relay_once()
            except Exception as exc:
                logger.error("outbox.relay_failed", extra={"error": repr(exc)})
                await anyio.sleep(self._error_wait)
                continue
            if sent:
                logger.debug("outbox.relayed", extra={"count": sent})
            else:
                await anyio.sleep(self._idle)
