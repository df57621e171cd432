"""The docs chart: medians (bars) with min-max (whiskers) from bench/results/*.json."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from bench.compare.harness import RESULTS

DOCS_CHART = Path(__file__).resolve().parents[2] / "docs" / "performance.png"
PANELS = (
    ("drain", "jobs_per_s", "Drain: jobs/s"),
    ("steady", "completed_per_s", "Steady state: completed jobs/s"),
    ("latency", "p50_ms", "Pickup latency p50, ms (log scale, lower is better)"),
    ("io_bound", "pct_of_limit", "I/O-bound: % of 333 jobs/s"),
)


def load(results: Path, scenario: str) -> dict[str, Any] | None:
    """The full run's results if there is one, else the --quick run's."""
    for name in (f"{scenario}.json", f"{scenario}-quick.json"):
        path = results / name
        if path.exists():
            document: dict[str, Any] = json.loads(path.read_text())
            return document
    return None


def draw(results: Path, out: Path) -> Path:
    """Draw every panel that has results; write the PNG to `out`."""
    figure, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (scenario, key, title) in zip(axes.flat, PANELS, strict=True):
        document = load(results, scenario)
        if document is None:
            ax.set_title(f"{title}: not run")
            ax.axis("off")
            continue
        _panel(ax, document, key, title)
    figure.suptitle("Bars: median of the runs; whiskers: min-max. Green: ours.", fontsize=10)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out


def _panel(ax: Any, document: dict[str, Any], key: str, title: str) -> None:
    labels, medians, low, high = [], [], [], []
    for label, metrics in document["summary"].items():
        stats = metrics.get(key)
        if not stats:
            continue
        labels.append(label)
        medians.append(stats["median"])
        low.append(stats["median"] - stats["min"])
        high.append(stats["max"] - stats["median"])
    colours = ["tab:green" if label.startswith("ours") else "tab:gray" for label in labels]
    ax.barh(labels, medians, xerr=[low, high], color=colours, capsize=3)
    ax.invert_yaxis()
    if key.endswith("_ms"):
        ax.set_xscale("log")
    quick = " (--quick)" if document.get("quick") else ""
    ax.set_title(f"{title}{quick}")
    for y, value in enumerate(medians):
        ax.annotate(f"{value:,.1f}", (value, y), xytext=(4, 0), textcoords="offset points")


def main() -> None:
    """`python -m bench.compare.chart [--results DIR] [--out PNG]`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=DOCS_CHART)
    args = parser.parse_args()
    print(f"chart: {draw(args.results, args.out)}")


if __name__ == "__main__":
    main()
