"""`skincare demo` works from a clean checkout: it exits 0 only if every step held."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_demo_exits_0_and_reports_every_step() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "skincare_services.cli.main", "demo"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "steps held" in result.stdout
