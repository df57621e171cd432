"""The `skincare` CLI run as a child process, as an operator types it."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_skincare(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`skincare *args` with `env` over this process's environment, INFO logs on stderr."""
    command = [sys.executable, "-m", "skincare_services.cli.main", *args]
    full = {**os.environ, **env, "SKINCARE_LOG_LEVEL": "INFO"}
    return subprocess.run(command, env=full, capture_output=True, text=True, timeout=60)


def skincare_json(env: dict[str, str], *args: str) -> object:
    """The JSON `skincare *args` prints; the command must exit 0."""
    done = run_skincare(env, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
