"""The history's rules: what a query matches, newest first, a live job's state, the retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.history import (
    FINISHED_STATES,
    JOB_STATES,
    LIVE_STATES,
    HistoryQuery,
    InvalidHistoryQuery,
    JobRecord,
    JobState,
    Retention,
    live_state,
    newest_first,
)

_T0 = datetime(2026, 12, 5, tzinfo=UTC)
_moments = st.integers(0, 100).map(lambda s: _T0 + timedelta(seconds=s))
_words = st.sampled_from(["a", "b", "c"])
_payloads = st.dictionaries(_words, _words, max_size=3)


@st.composite
def _records(draw: st.DrawFn) -> JobRecord:
    state = draw(st.sampled_from(JOB_STATES))
    finished = draw(_moments) if state in FINISHED_STATES else None
    return JobRecord(
        id=draw(st.text("xyz", min_size=1, max_size=3)),
        type=draw(_words),
        queue=draw(_words),
        state=state,
        payload=draw(_payloads),
        enqueued_at=draw(_moments),
        finished_at=finished,
    )


_queries = st.builds(
    HistoryQuery,
    job_type=st.none() | _words,
    state=st.none() | st.sampled_from(JOB_STATES),
    queue=st.none() | _words,
    since=st.none() | _moments,
    args=_payloads,
)


@given(_records(), _queries)
def test_a_query_matches_a_record_when_every_field_it_gives_matches(
    record: JobRecord, query: HistoryQuery
) -> None:
    expected = (
        query.job_type in (None, record.type)
        and query.state in (None, record.state)
        and query.queue in (None, record.queue)
        and (query.since is None or (record.at is not None and record.at >= query.since))
        and all(record.payload.get(k) == v for k, v in query.args.items())
    )
    assert query.matches(record) is expected


@given(_records(), _payloads)
def test_a_record_always_matches_its_own_payload_and_no_other_value(
    record: JobRecord, extra: dict[str, str]
) -> None:
    assert HistoryQuery(args=record.payload, job_id=record.id).matches(record)
    wrong = {k: v + "!" for k, v in extra.items()}
    assert not wrong or not HistoryQuery(args=wrong).matches(record)


@given(st.lists(_records(), max_size=12), st.integers(1, 12))
def test_newest_first_keeps_the_limit_newest_in_order(records: list[JobRecord], limit: int) -> None:
    found = newest_first(records, limit)
    assert len(found) == min(limit, len(records))
    moments = [r.at for r in found]
    assert moments == sorted(moments, key=lambda m: m or datetime.min, reverse=True)
    left = [r for r in records if r not in found]
    if found and left and found[-1].at is not None:
        assert all(r.at is None or r.at <= found[-1].at for r in left)


@given(_moments, st.integers(0, 3), _moments, st.none() | _moments)
def test_a_live_job_runs_while_its_lease_holds_then_waits(
    now: datetime, attempts: int, due: datetime, leased_until: datetime | None
) -> None:
    state = live_state(now=now, attempts=attempts, due_at=due, leased_until=leased_until)
    assert state in LIVE_STATES
    assert (state == "running") is (leased_until is not None and leased_until > now)
    if state != "running":
        assert (state == "retrying") is (attempts > 0)
    if state in ("scheduled", "enqueued"):
        assert (state == "scheduled") is (due > now)


@given(st.sampled_from(FINISHED_STATES))
def test_dead_jobs_keep_the_dead_retention_the_rest_the_done_one(state: JobState) -> None:
    retention = Retention(done=timedelta(hours=1), dead=timedelta(days=2))
    kept = retention.kept_for(state)
    assert kept == (timedelta(days=2) if state == "dead" else timedelta(hours=1))


def test_a_bad_query_is_refused_in_one_line() -> None:
    with pytest.raises(InvalidHistoryQuery, match="unknown job state 'lost'"):
        HistoryQuery(state="lost")  # type: ignore[arg-type]  # what a CLI user may type
    with pytest.raises(InvalidHistoryQuery, match="limit must be between 1 and 1000"):
        HistoryQuery(limit=0)
    with pytest.raises(InvalidHistoryQuery, match="the time range is empty"):
        HistoryQuery(since=_T0, until=_T0)
    with pytest.raises(ValueError, match="positive"):
        Retention(done=timedelta(0))
