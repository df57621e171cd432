"""The in-memory record of finished jobs: done and failed counts per wall-clock minute."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from skincare_core.jobs.outcomes import KEPT, NONE_FINISHED, OutcomeCounts


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


class MinuteOutcomes:
    """One queue's finished jobs by the minute they ended in, an hour of minutes kept."""

    def __init__(self, wall_clock: Callable[[], datetime]) -> None:
        self._wall = wall_clock
        self._minutes: dict[datetime, OutcomeCounts] = {}

    def add(self, *, done: int = 0, failed: int = 0) -> None:
        """Count jobs that ended now; minutes older than `KEPT` are forgotten on the way."""
        now = self._wall()
        minute = _minute(now)
        seen = self._minutes.get(minute, NONE_FINISHED)
        self._minutes[minute] = OutcomeCounts(seen.done + done, seen.failed + failed)
        for old in [m for m in self._minutes if m < now - KEPT]:
            del self._minutes[old]

    def recent(self, window: timedelta) -> OutcomeCounts:
        """The jobs that ended in the minutes that started within `window` of now."""
        since = self._wall() - min(window, KEPT)
        counted = [c for minute, c in self._minutes.items() if minute > since]
        return OutcomeCounts(sum(c.done for c in counted), sum(c.failed for c in counted))
