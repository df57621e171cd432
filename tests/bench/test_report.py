"""The bench harness's ratios: of the medians, and within each repetition (paired)."""

from __future__ import annotations

import statistics

from hypothesis import given
from hypothesis import strategies as st

from bench.compare.report import Ratio, ratios, summarize

RATIO = Ratio("ours", "theirs", "jobs_per_s")
_RATES = st.floats(min_value=1.0, max_value=1e6, allow_nan=False)


def test_the_paired_ratio_compares_each_rep_with_its_own_round() -> None:
    # The machine was twice as fast in the second round: both sides felt it.
    runs = {
        "ours": [{"jobs_per_s": 90.0}, {"jobs_per_s": 180.0}, {"jobs_per_s": 95.0}],
        "theirs": [{"jobs_per_s": 100.0}, {"jobs_per_s": 200.0}, {"jobs_per_s": 100.0}],
    }
    [found] = ratios(summarize(runs), [RATIO], runs)
    assert found["ratio"] == 95.0 / 100.0
    assert found["paired"] == {"median": 0.9, "min": 0.9, "max": 0.95}


def test_without_the_runs_only_the_ratio_of_medians_is_given() -> None:
    runs = {"ours": [{"jobs_per_s": 90.0}], "theirs": [{"jobs_per_s": 100.0}]}
    [found] = ratios(summarize(runs), [RATIO])
    assert "paired" not in found


@given(st.lists(st.tuples(_RATES, _RATES), min_size=1, max_size=9))
def test_the_paired_median_is_the_median_of_the_per_rep_ratios(
    rounds: list[tuple[float, float]],
) -> None:
    runs = {
        "ours": [{"jobs_per_s": ours} for ours, _ in rounds],
        "theirs": [{"jobs_per_s": theirs} for _, theirs in rounds],
    }
    [found] = ratios(summarize(runs), [RATIO], runs)
    per_rep = [ours / theirs for ours, theirs in rounds]
    assert found["paired"]["median"] == statistics.median(per_rep)
    assert found["paired"]["min"] <= found["paired"]["median"] <= found["paired"]["max"]
