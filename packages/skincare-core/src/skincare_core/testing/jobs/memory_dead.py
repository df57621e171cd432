"""The dead letters of one in-memory queue: inspect, redrive to the queue, purge."""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod

from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import DeadLetter


class MemoryDeadLetters(ABC):
    """DeadLetters of a queue named `name`; a redriven job goes back through `_revive`."""

    name: str

    def __init__(self) -> None:
        self._dead: dict[str, DeadLetter] = {}

    async def count(self, *, queue: str | None = None) -> int:
        """Dead jobs (none when `queue` names another queue)."""
        return len(self._dead) if queue in (None, self.name) else 0

    async def list(
        self, *, job_type: str | None = None, queue: str | None = None, limit: int = 100
    ) -> builtins.list[DeadLetter]:
        """Dead jobs, oldest first."""
        if queue not in (None, self.name):
            return []
        dead = sorted(self._dead.values(), key=lambda d: d.dead_at)
        return [d for d in dead if job_type in (None, d.job.type)][:limit]

    async def get(self, job_id: str) -> DeadLetter | None:
        """The dead job with this id, if it is dead."""
        return self._dead.get(job_id)

    async def redrive(self, job_id: str) -> bool:
        """Back to the queue with attempts reset (and without its unique key)."""
        dead = self._dead.pop(job_id, None)
        if dead is not None:
            self._revive(dead.job)
        return dead is not None

    async def redrive_all(self, *, job_type: str | None = None, queue: str | None = None) -> int:
        """Redrive every dead job (of one type)."""
        chosen = await self.list(job_type=job_type, queue=queue, limit=len(self._dead))
        for dead in chosen:
            await self.redrive(dead.job.id)
        return len(chosen)

    async def purge(self) -> int:
        """Forget every dead job."""
        count = len(self._dead)
        self._dead.clear()
        return count

    @abstractmethod
    def _revive(self, job: Job) -> None:
        """Put a redriven job back in the queue, visible now, attempts 0."""
