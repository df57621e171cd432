"""skincare_core and every submodule import without any adapter library."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("sqlalchemy", "psycopg", "boto3", "botocore", "litestar", "fpdf")

PROBE = """
import json, pkgutil, sys
import skincare_core
names = ["skincare_core"]
for info in pkgutil.walk_packages(skincare_core.__path__, "skincare_core."):
    __import__(info.name)
    names.append(info.name)
roots = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"imported": names, "roots": roots}))
"""


def test_core_imports_no_adapter_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    report = json.loads(done.stdout)
    assert "skincare_core.worker" in report["imported"]
    assert "skincare_core.testing.memory_queue" in report["imported"]
    assert [root for root in report["roots"] if root.startswith(FORBIDDEN)] == []
