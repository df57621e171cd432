"""Unique keys held by live in-memory jobs, shared by every named queue of one backend."""

from __future__ import annotations


class UniqueKeys:
    """unique key -> the id of the live (ready, scheduled or running) job holding it."""

    def __init__(self) -> None:
        self._holders: dict[str, str] = {}

    def taken(self, key: str) -> bool:
        """Whether a live job holds `key`."""
        return key in self._holders

    def take(self, key: str | None, job_id: str) -> bool:
        """Hold `key` for `job_id`; False if another live job holds it. None always succeeds."""
        if key is None:
            return True
        if self._holders.get(key, job_id) != job_id:
            return False
        self._holders[key] = job_id
        return True

    def release(self, key: str | None, job_id: str) -> None:
        """The job is no longer live: its key is free again."""
        if key is not None and self._holders.get(key) == job_id:
            del self._holders[key]
