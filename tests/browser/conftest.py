"""The browser tests skip on a machine without Chromium, naming the install command, and fail
there instead when SKINCARE_REQUIRE_BROWSER=1 (CI)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.browser.chromium import MISSING, browser_outcome

# The live page's test runs the real processes on a fresh database, as the end-to-end tests do.
from tests.e2e.conftest import database_url, home, shop

__all__ = ["database_url", "home", "shop"]


@pytest.fixture(autouse=True)
def chromium_installed() -> None:
    """Skip (or, where the browser is required, fail) a browser test without Chromium."""
    outcome = browser_outcome(shutil.which("chromium"), os.environ)
    if outcome == "skip":
        pytest.skip(MISSING)
    if outcome == "fail":
        pytest.fail(MISSING, pytrace=False)
