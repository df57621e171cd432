"""The ops page's charts as inline SVG path data, drawn here rather than in the template: one
path per series (done, retried, failed) instead of a shape per minute keeps an hour of a dozen
charts a few kilobytes, and quick to render."""

from __future__ import annotations

from skincare_core.jobs.minutes import Trend

WIDTH = 6  # pixels per minute: an hour is 360
HEIGHT = 60  # the tallest bar, for the busiest minute
BASE = 62  # the bars' baseline (2 px of frame below)


def chart_paths(trend: Trend) -> dict[str, str]:
    """For each series, the SVG path of its bars, stacked done, retried, failed from the
    baseline; an empty string for a series without jobs."""
    scale = HEIGHT / trend.peak
    paths: dict[str, list[str]] = {"done": [], "retried": [], "failed": []}
    for minute, counts in enumerate(zip(trend.done, trend.retried, trend.failed, strict=True)):
        bottom = float(BASE)
        for series, count in zip(paths, counts, strict=True):
            if count:
                height = count * scale
                paths[series].append(f"M{minute * WIDTH} {bottom - height:.1f}h5v{height:.1f}h-5z")
                bottom -= height
    return {series: "".join(parts) for series, parts in paths.items()}
