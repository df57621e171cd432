"""A clock tests move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    """Stands still until `advance` is called."""

    def __init__(self, start: datetime = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)) -> None:
        self._now = start

    def now(self) -> datetime:
        """The current (fake) time."""
        return self._now

    def advance(self, by: timedelta) -> None:
        """Move time forward."""
        self._now += by
