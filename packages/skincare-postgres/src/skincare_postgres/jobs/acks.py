"""Group commit for acks: acks that arrive while one DELETE runs share the next one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.lowlevel
from attrs import define, field

from skincare_postgres.errors import DatabaseUnavailable

Flush = Callable[[Sequence[tuple[str, str]]], Awaitable[None]]


@define
class _Batch:
    items: list[tuple[str, str]] = field(factory=list)
    done: anyio.Event = field(factory=anyio.Event)
    error: BaseException | None = None


class AckBatcher:
    """`ack` returns once its (job id, receipt) is deleted, in a batch with its neighbours."""

    def __init__(self, flush: Flush) -> None:
        self._flush = flush
        self._open = _Batch()
        self._leading = False

    async def ack(self, job_id: str, receipt: str) -> None:
        """Delete the job if the receipt is live; waits for the batch it joined."""
        batch = self._open
        batch.items.append((job_id, receipt))
        if self._leading:
            await batch.done.wait()
        else:
            await self._lead()
        if batch.error is not None:
            raise DatabaseUnavailable(f"ack not recorded: {batch.error}") from batch.error

    async def _lead(self) -> None:
        self._leading = True
        try:
            # Runners woken by the same claim are ready to ack too: one yield lets them join
            # this batch, instead of the first ack of each claim paying a DELETE of its own.
            await anyio.lowlevel.checkpoint()
            while self._open.items:
                current, self._open = self._open, _Batch()
                try:
                    await self._flush(current.items)
                except Exception as error:
                    current.error = error
                except BaseException as error:
                    current.error = error
                    raise
                finally:
                    current.done.set()
        finally:
            self._leading = False
            self._abandon_open_batch()

    def _abandon_open_batch(self) -> None:
        # Only after the leader was cancelled: nobody would flush these, so fail them now.
        if self._open.items:
            self._open.error = DatabaseUnavailable("ack batch abandoned by a cancelled flush")
            self._open.done.set()
            self._open = _Batch()
