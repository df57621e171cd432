"""Per-minute counts of job types: what the recorder counts, how rows add up, and the
percentiles read from the histograms."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.minutes import (
    BOUNDS_MS,
    BUCKETS,
    EMPTY,
    MinuteFlusher,
    MinuteRecorder,
    TypeMinute,
    bucket_of,
    merged,
    percentile_ms,
    trends,
)
from skincare_core.testing.jobs.memory_minutes import InMemoryMinuteStore

NOW = datetime(2026, 12, 6, 0, 30, 20, tzinfo=UTC)


@given(st.lists(st.floats(min_value=0, max_value=1000), min_size=1, max_size=50))
def test_a_percentile_is_the_bound_of_the_bucket_holding_it(seconds: list[float]) -> None:
    histogram = [0] * BUCKETS
    for value in seconds:
        histogram[bucket_of(value)] += 1
    p50 = percentile_ms(histogram, 0.5)
    assert p50 is not None
    below = [s for s in seconds if s * 1000 <= p50]
    assert len(below) >= len(seconds) / 2
    p95 = percentile_ms(histogram, 0.95)
    assert p95 is not None
    assert p95 >= p50


@given(
    st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 2), st.integers(0, 5)), max_size=30)
)
def test_merged_rows_add_up_to_the_same_totals(
    rows: list[tuple[str, int, int]],
) -> None:
    made = [TypeMinute("q", t, NOW - timedelta(minutes=m), done=d) for t, m, d in rows]
    together = merged(made)
    assert sum(r.done for r in together) == sum(d for _, _, d in rows)
    assert len({r.key for r in together}) == len(together)


def test_the_recorder_counts_each_outcome_and_time_in_its_minute() -> None:
    recorder = MinuteRecorder(clock=lambda: NOW)
    recorder.started("default", "send_email", 0.003)
    recorder.finished("default", "send_email", "done", 0.012)
    recorder.finished("default", "send_email", "retried", 0.012)
    recorder.finished("default", "send_email", "dead_lettered", 2.5)
    recorder.finished("default", "send_email", "cancelled", 1.0)
    [row] = recorder.take()
    assert (row.minute, row.done, row.retried, row.failed) == (NOW.replace(second=0), 1, 1, 1)
    assert sum(row.durations) == 3
    assert row.pickups[bucket_of(0.003)] == 1
    assert recorder.take() == []
    assert percentile_ms(EMPTY, 0.5) is None
    assert bucket_of(1e6) == len(BOUNDS_MS)


def test_a_trend_has_sixty_minutes_and_sums_by_name() -> None:
    rows = [
        TypeMinute("default", "a", NOW.replace(second=0), done=2),
        TypeMinute("default", "b", NOW.replace(second=0), failed=1),
        TypeMinute("bulk", "a", NOW.replace(second=0) - timedelta(minutes=90), done=9),
    ]
    [default] = trends(rows, NOW, lambda r: r.queue)
    assert [len(default.done), len(default.failed)] == [60, 60]
    assert (sum(default.done), default.done[-1], default.failed[-1]) == (2, 2, 1)
    assert default.peak == 3
    assert [t.name for t in trends(rows, NOW, lambda r: r.job_type)] == ["a", "b"]


class _Down(InMemoryMinuteStore):
    down = True

    async def add(self, rows: Sequence[TypeMinute]) -> None:
        if self.down:
            raise Unavailable("database down")
        await super().add(rows)


@pytest.mark.anyio
async def test_counts_the_store_cannot_take_wait_for_the_next_flush() -> None:
    recorder, store = MinuteRecorder(clock=lambda: NOW), _Down()
    flusher = MinuteFlusher(recorder, store)
    recorder.finished("default", "a", "done", 0.01)
    await flusher.flush()
    store.down = False
    recorder.finished("default", "a", "done", 0.01)
    await flusher.flush()
    [row] = await store.since(NOW - timedelta(hours=1))
    assert row.done == 2
    assert anyio.get_current_task() is not None
