"""The day a sales summary reports: the calendar day, in the shop's zone, before the tick's."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.shop.sales import SHOP_TIMEZONE, day_before

_TICKS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_ZONES = st.sampled_from([SHOP_TIMEZONE, "UTC", "Europe/Berlin", "America/New_York"])


@given(tick=_TICKS, zone=_ZONES)
def test_the_day_is_the_whole_local_day_before_the_ticks(tick: datetime, zone: str) -> None:
    local = ZoneInfo(zone)
    day = day_before(tick, zone)
    assert day.day == tick.astimezone(local).date() - timedelta(days=1)
    # It ends at the local midnight at or before the tick: no instant of the tick's own day.
    assert day.start < day.end <= tick < day.end + timedelta(hours=25)
    for edge, date in ((day.start, day.day), (day.end, day.day + timedelta(days=1))):
        assert (edge.astimezone(local).date(), edge.astimezone(local).time()) == (date, time(0))
    # A tick at the midnight that ends a day reports that day; the day before it ends where
    # it starts: consecutive days tile time without gap or overlap.
    assert day_before(day.end, zone) == day
    assert day_before(day.start, zone).end == day.start


@given(tick=_TICKS)
def test_in_jakarta_a_day_is_24_hours_from_17_00_utc(tick: datetime) -> None:
    day = day_before(tick)
    assert day.end - day.start == timedelta(hours=24)
    assert day.start.astimezone(UTC).time() == time(17)


def test_a_naive_tick_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        day_before(datetime(2026, 12, 4, 7))
