"""The production Clock: the system's wall clock in UTC."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Reads the system clock."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        return datetime.now(UTC)
