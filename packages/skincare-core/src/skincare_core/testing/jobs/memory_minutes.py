"""The per-minute counts of job types, kept in memory (`MinuteStore`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from skincare_core.jobs.minutes import TypeMinute, merged


class InMemoryMinuteStore:
    """Every added row, summed by queue, type and minute when read."""

    def __init__(self) -> None:
        self._rows: list[TypeMinute] = []

    async def add(self, rows: Sequence[TypeMinute]) -> None:
        """Keep the rows."""
        self._rows = merged([*self._rows, *rows])

    async def since(self, start: datetime) -> list[TypeMinute]:
        """The minutes from `start` on."""
        return [row for row in self._rows if row.minute >= start]
