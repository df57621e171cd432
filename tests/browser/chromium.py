"""Whether the browser tests run, skip or fail: they need Debian's Chromium, which a fresh clone
may lack, and CI (`.ci/run`) must never pass without running them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

REQUIRE_BROWSER = "SKINCARE_REQUIRE_BROWSER"
"""Set to 1 (as `.ci/run` does) to fail the browser tests instead of skipping them."""

MISSING = f"chromium is not installed: apt-get install chromium ({REQUIRE_BROWSER}=1 fails instead)"
"""The one line a skipped or failed browser test reports."""

Outcome = Literal["run", "skip", "fail"]


def browser_outcome(chromium: str | None, environ: Mapping[str, str]) -> Outcome:
    """Run with a Chromium (`chromium` is its path); without one, skip unless the environment
    requires the browser tests, then fail."""
    if chromium:
        return "run"
    return "fail" if environ.get(REQUIRE_BROWSER) == "1" else "skip"
