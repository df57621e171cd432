"""Summaries of repeated runs: median/min/max, ours/theirs ratios, the table and the JSON."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

Runs = Mapping[str, Sequence[Mapping[str, float]]]


@frozen
class Metric:
    """A column of the table: a key of each run's result, its header and its format."""

    key: str
    header: str
    fmt: str = ",.0f"


@frozen
class Ratio:
    """ours/theirs of one metric's medians, e.g. ("ours b10", "pgqueuer b10", "jobs_per_s")."""

    ours: str
    theirs: str
    key: str


def summarize(runs: Runs) -> dict[str, dict[str, dict[str, float]]]:
    """label -> metric -> {median, min, max} over the repetitions."""
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for label, results in runs.items():
        keys = sorted({key for result in results for key in result})
        summary[label] = {
            key: _stats([r[key] for r in results if key in r and r[key] is not None])
            for key in keys
        }
    return summary


def ratios(
    summary: Mapping[str, Any], wanted: Sequence[Ratio], runs: Runs | None = None
) -> list[dict[str, Any]]:
    """Each ratio of medians, skipping pairs where a side has no result. With `runs`, also the
    ratio within each repetition (the two sides ran in the same round, so a slow spell of the
    machine weighs on both): `paired`, their median, min and max."""
    found = []
    for ratio in wanted:
        try:
            ours = summary[ratio.ours][ratio.key]["median"]
            theirs = summary[ratio.theirs][ratio.key]["median"]
        except KeyError:
            continue
        entry: dict[str, Any] = {"ours": ratio.ours, "theirs": ratio.theirs, "key": ratio.key}
        entry["ratio"] = _divide(ours, theirs)
        if runs is not None:
            pairs = zip(runs[ratio.ours], runs[ratio.theirs], strict=True)
            entry["paired"] = _stats([_divide(o[ratio.key], t[ratio.key]) for o, t in pairs])
        found.append(entry)
    return found


def _divide(ours: float, theirs: float) -> float:
    return ours / theirs if theirs else float("inf")


def table(summary: Mapping[str, Any], metrics: Sequence[Metric]) -> str:
    """A Markdown table: one row per variant, `median (min-max)` per metric."""
    header = "| system | " + " | ".join(m.header for m in metrics) + " |"
    lines = [header, "|" + " --- |" * (len(metrics) + 1)]
    for label, values in summary.items():
        cells = [_cell(values.get(m.key), m.fmt) for m in metrics]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_lines(found: Sequence[Mapping[str, Any]]) -> str:
    """One line per ratio: `ours b10 / pgqueuer b10 (jobs_per_s): 2.91x`, and where measured
    `(per rep: median 2.88x, 2.70-3.02x)`."""
    return "\n".join(_ratio_line(r) for r in found)


def _ratio_line(found: Mapping[str, Any]) -> str:
    line = f"{found['ours']} / {found['theirs']} ({found['key']}): {found['ratio']:.2f}x"
    if paired := found.get("paired"):
        low, high = paired["min"], paired["max"]
        line += f" (per rep: median {paired['median']:.2f}x, {low:.2f}-{high:.2f}x)"
    return line


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Write the results document, creating bench/results/ if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")


def _stats(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _cell(stats: Mapping[str, float] | None, fmt: str) -> str:
    if not stats:
        return "n/a"
    median, low, high = (format(stats[k], fmt) for k in ("median", "min", "max"))
    return median if low == high else f"{median} ({low}-{high})"
