"""The in-memory pauses: what every in-memory queue of one `InMemoryQueues` honours at once."""

from __future__ import annotations

from collections.abc import Callable

from skincare_core.jobs.steering import Paused, one_target


class InMemoryPauses:
    """The `Pauses` port in memory; `on_resume` wakes the queues' waiting receivers."""

    def __init__(self, on_resume: Callable[[], None] = lambda: None) -> None:
        self._queues: set[str] = set()
        self._types: set[str] = set()
        self._on_resume = on_resume

    @property
    def now(self) -> Paused:
        """What is paused at this moment (no wait: the queues read it on every claim)."""
        return Paused(self._queues, self._types)

    async def pause(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Pause the queue or the type; whether it was not paused."""
        kind, name = one_target(queue, job_type)
        chosen = self._queues if kind == "queue" else self._types
        added = name not in chosen
        chosen.add(name)
        return added

    async def resume(self, *, queue: str | None = None, job_type: str | None = None) -> bool:
        """Resume the queue or the type; whether it was paused."""
        kind, name = one_target(queue, job_type)
        chosen = self._queues if kind == "queue" else self._types
        removed = name in chosen
        chosen.discard(name)
        if removed:
            self._on_resume()
        return removed

    async def paused(self) -> Paused:
        """What is paused now."""
        return self.now
