"""What the real-process cap tests read back: each job's (start, end) times (then anything else
the worker notes), one line a job in each worker process's file, the most jobs running at once
and how long a freed slot stays empty."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.unmeasured import unmeasured


def _events(spans: Sequence[tuple[float, float]]) -> list[tuple[float, int]]:
    """Each span's start (+1) and end (-1) in time order; at one instant ends come first."""
    return sorted([(end, -1) for _, end in spans] + [(start, 1) for start, _ in spans])


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most spans (start, end) open at one instant; one ending as another starts is not."""
    running = peak = 0
    for _, change in _events(spans):
        running += change
        peak = max(peak, running)
    return peak


def refill_gaps(spans: Sequence[tuple[float, float]]) -> list[float]:
    """How long each freed slot stayed empty: each end paired, oldest first, with the first
    start after it (the ends after the last start have none)."""
    freed: deque[float] = deque()
    gaps = []
    for at, change in _events(spans):
        if change < 0:
            freed.append(at)
        elif freed:
            gaps.append(at - freed.popleft())
    return gaps


def wait_for_spans(outs: list[Path], jobs: int, within: float) -> list[tuple[float, float]]:
    """The spans of `jobs` jobs once the files `outs` hold that many; AssertionError if they
    do not within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        lines = [line for out in outs if out.exists() for line in out.read_text().splitlines()]
        if len(lines) >= jobs:
            return [(float(a), float(b)) for a, b, *_ in (line.split() for line in lines)]
        time.sleep(0.2)
    raise AssertionError(f"not every job ran within {within:.0f} s")


def spans_of_workers(
    argv: Callable[[Path], list[str]], outs: list[Path], jobs: int, within: float
) -> list[tuple[float, float]]:
    """Start a worker process (`python -m` with `argv(out)`) for each file of `outs`, wait for
    the spans of `jobs` jobs (`wait_for_spans`), then stop every worker."""
    # Unmeasured (tests/unmeasured.py): the in-process cap tests measure the same paths.
    env = unmeasured(os.environ)
    children = [subprocess.Popen([sys.executable, "-m", *argv(out)], env=env) for out in outs]
    try:
        return wait_for_spans(outs, jobs, within=within)
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=30)
