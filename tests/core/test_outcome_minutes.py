"""The in-memory record of finished jobs counts by wall-clock minute: a window counts the minutes
that started within it, and minutes older than an hour are forgotten."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.outcomes import KEPT, OutcomeCounts
from skincare_core.testing.jobs.memory_outcomes import MinuteOutcomes

START = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


@given(
    ends=st.lists(st.tuples(st.integers(0, 600), st.booleans()), max_size=40),
    later=st.integers(0, 600),
    window=st.integers(1, 3 * 3600),
)
def test_a_window_counts_the_jobs_of_the_minutes_that_started_within_it(
    ends: list[tuple[int, bool]], later: int, window: int
) -> None:
    clock = Clock()
    record = MinuteOutcomes(clock)
    offsets = sorted(ends)
    for offset, failed in offsets:
        clock.now = START + timedelta(seconds=offset)
        record.add(done=0 if failed else 1, failed=1 if failed else 0)
    clock.now = START + timedelta(seconds=max([o for o, _ in offsets], default=0) + later)
    since = clock.now - min(timedelta(seconds=window), KEPT)
    counted = [f for o, f in offsets if _minute(START + timedelta(seconds=o)) > since]
    expected = OutcomeCounts(done=counted.count(False), failed=counted.count(True))
    assert record.recent(timedelta(seconds=window)) == expected


def test_minutes_older_than_an_hour_are_forgotten_on_the_next_write() -> None:
    clock = Clock()
    record = MinuteOutcomes(clock)
    record.add(done=3)
    clock.now = START + KEPT + timedelta(minutes=2)
    record.add(failed=1)
    clock.now = START
    # Back at the first minute, only a forgotten minute could still count its three jobs.
    assert record.recent(timedelta(minutes=5)) == OutcomeCounts(done=0, failed=1)
