"""Every package of the workspace is measured, and has its coverage floor."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.coverage_floors import floors

ROOT = Path(__file__).resolve().parents[2]


def _packages() -> set[str]:
    return {path.name for path in ROOT.glob("*/*/src/*") if (path / "__init__.py").exists()}


def test_every_package_is_measured_and_has_a_floor() -> None:
    source = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["coverage"]["run"]
    assert set(source["source"]) == _packages()
    assert set(floors(ROOT / "pyproject.toml")) == _packages()


def test_core_holds_95_and_every_other_package_90() -> None:
    found = floors(ROOT / "pyproject.toml")
    assert found.pop("skincare_core") >= 95
    assert min(found.values()) >= 90
