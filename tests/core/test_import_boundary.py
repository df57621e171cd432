"""skincare_core imports no adapter library, and its engine (`jobs`) imports nothing of the shop."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("sqlalchemy", "psycopg", "boto3", "botocore", "litestar", "fpdf")

PROBE = """
import json, pkgutil, sys
import {package}
names = ["{package}"]
for info in pkgutil.walk_packages({package}.__path__, "{package}."):
    __import__(info.name)
    names.append(info.name)
print(json.dumps({{"imported": names, "modules": sorted(sys.modules)}}))
"""


def probe(package: str) -> dict[str, list[str]]:
    """Import `package` and every submodule in a fresh interpreter; what got imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(package=package)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report: dict[str, list[str]] = json.loads(done.stdout)
    return report


def test_core_imports_no_adapter_library() -> None:
    report = probe("skincare_core")
    assert "skincare_core.jobs.worker" in report["imported"]
    assert "skincare_core.testing.jobs.memory_queue" in report["imported"]
    roots = {name.split(".")[0] for name in report["modules"]}
    assert [root for root in roots if root.startswith(FORBIDDEN)] == []


def test_the_engine_and_its_test_kit_import_nothing_of_the_shop() -> None:
    for package in ("skincare_core.jobs", "skincare_core.testing.jobs"):
        report = probe(package)
        assert "skincare_core.jobs.worker" in report["modules"]
        shop = [name for name in report["modules"] if name.startswith("skincare_core.shop")]
        assert shop == [], f"{package} pulls in {shop}"


def test_the_test_drain_imports_nothing_of_the_shop_nor_pytest() -> None:
    # A team runs the drain under any test runner; pytest loads only the fixture's module.
    probe_drain = (
        "import json, sys, skincare_core.testing.drain; print(json.dumps(list(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe_drain], capture_output=True, text=True, check=True, timeout=60
    )
    modules: list[str] = json.loads(done.stdout)
    assert "skincare_core.jobs.executor" in modules
    assert [m for m in modules if m.startswith(("skincare_core.shop", "pytest", "_pytest"))] == []
