"""Where a queue's claims start reading its index: past the entries of jobs long gone.

Every job leaves dead entries in the claim index (its insert, its lease's update, its delete).
Vacuum removes them, unless a transaction anywhere on the server holds the xmin horizon (an
idle-in-transaction session, an analytics query): then a claim that walks the index from its
start reads every job finished since, and slows down as the hold goes on.

A claim returns its rows in due order, skipping only rows another claim has locked. So a job due
before the earliest row it returned was either being claimed by someone else or not committed
yet; a later claim may start at that due time (less a little slack for short transactions that
commit late) and miss nothing else. What it may miss (a job whose claimer rolled back, an insert
of a long transaction) is found by a sweep from the index's start every `sweep_every` seconds,
or at once after a failed claim of this queue.

With priorities the claim reads each priority's rows in due order from a floor of its own
(`PriorityFloors`): the argument holds for each priority a claim returned rows of.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from skincare_core.jobs.priority import PRIORITIES

SWEEP_EVERY = 5.0
SLACK = timedelta(seconds=1)


class ClaimFloor:
    """The due time this queue's next claim may start at; None: from the index's start."""

    def __init__(
        self,
        *,
        sweep_every: float = SWEEP_EVERY,
        slack: timedelta = SLACK,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sweep_every = sweep_every
        self._slack = slack
        self._clock = clock
        self._floor: datetime | None = None
        self._swept_at = -math.inf

    @property
    def floor(self) -> datetime | None:
        """The current floor, without starting a sweep (for a look at the next due time)."""
        return self._floor

    def for_claim(self) -> datetime | None:
        """The floor for the claim about to run: None when a sweep is due."""
        now = self._clock()
        if now - self._swept_at >= self._sweep_every:
            self._swept_at = now
            return None
        return self._floor

    def claimed(self, due_times: Iterable[datetime]) -> None:
        """A claim returned rows that became due at `due_times`: the next may start there."""
        earliest = min(due_times, default=None)
        if earliest is not None:
            self._floor = earliest - self._slack

    def failed(self) -> None:
        """A claim failed (its rows may be due again below the floor): sweep on the next."""
        self._swept_at = -math.inf


class PriorityFloors:
    """One `ClaimFloor` per priority, for a claim that reads each priority from its own floor;
    all of them sweep together, every `sweep_every` seconds and after a failed claim."""

    def __init__(
        self,
        *,
        sweep_every: float = SWEEP_EVERY,
        slack: timedelta = SLACK,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._floors = {
            p: ClaimFloor(sweep_every=sweep_every, slack=slack, clock=clock) for p in PRIORITIES
        }

    @property
    def floors(self) -> dict[int, datetime | None]:
        """Each priority's current floor, without starting a sweep."""
        return {p: floor.floor for p, floor in self._floors.items()}

    def for_claim(self) -> dict[int, datetime | None]:
        """Each priority's floor for the claim about to run (None where a sweep is due)."""
        return {p: floor.for_claim() for p, floor in self._floors.items()}

    def claimed(self, rows: Iterable[tuple[int, datetime]]) -> None:
        """A claim returned rows of these (priority, due time): each priority's floor follows."""
        by_priority: dict[int, list[datetime]] = {}
        for priority, due in rows:
            by_priority.setdefault(priority, []).append(due)
        for priority, dues in by_priority.items():
            self._floors[priority].claimed(dues)

    def failed(self) -> None:
        """A claim failed: every priority sweeps on the next."""
        for floor in self._floors.values():
            floor.failed()
