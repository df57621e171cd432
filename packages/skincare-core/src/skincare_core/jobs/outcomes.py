"""How many jobs each named queue finished lately: the `JobOutcomes` port and its value.

A queue adapter counts its jobs' ends as it settles them (an ack is `done`; a job moved to the
dead letters, by a handler's verdict or its last attempt, is `failed`; a retry is neither, the job
is not over), by wall-clock minute, and reads back the minutes that started within a window. So
"the last 5 minutes" covers between four and five minutes of history, whole minutes only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Protocol

from attrs import frozen

# What the ops page shows; the adapters keep an hour of minutes at least, no more than a few.
RECENT = timedelta(minutes=5)
KEPT = timedelta(hours=1)


@frozen
class OutcomeCounts:
    """Jobs of one queue that ended over a window: acked (`done`) or dead-lettered (`failed`)."""

    done: int
    failed: int


NONE_FINISHED = OutcomeCounts(0, 0)


class JobOutcomes(Protocol):
    """A read-only record of the jobs each named queue finished, by minute."""

    async def recent(self, window: timedelta = RECENT) -> Mapping[str, OutcomeCounts]:
        """Per named queue, the jobs finished in the minutes that started within `window` of
        now (up to `KEPT`); a queue that finished none may be missing."""
