"""The rule for the browser tests without Chromium: skip on a developer's machine, fail in CI."""

from __future__ import annotations

import pytest

from tests.browser.chromium import REQUIRE_BROWSER, browser_outcome


@pytest.mark.parametrize("required", [{}, {REQUIRE_BROWSER: "1"}, {REQUIRE_BROWSER: "0"}])
def test_with_chromium_the_browser_tests_run(required: dict[str, str]) -> None:
    assert browser_outcome("/usr/bin/chromium", required) == "run"


@pytest.mark.parametrize("chromium", [None, ""])
def test_without_chromium_they_skip_unless_required(chromium: str | None) -> None:
    assert browser_outcome(chromium, {}) == "skip"
    assert browser_outcome(chromium, {REQUIRE_BROWSER: "0"}) == "skip"
    assert browser_outcome(chromium, {REQUIRE_BROWSER: "1"}) == "fail"
