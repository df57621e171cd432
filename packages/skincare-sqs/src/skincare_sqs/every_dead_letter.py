"""The dead letters of every named queue: one DLQ each, read as one."""

from __future__ import annotations

import builtins
from collections.abc import Mapping

from skincare_core.jobs.ports import DeadLetter, DeadLetters


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
