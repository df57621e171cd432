"""Child processes that coverage does not measure.

Coverage's tracer about doubles a Python child's CPU: the checkout end-to-end test's worker
and API take 29 s measured and 18 s not. The load and fault tests' children repeat the paths
that the other tests' children and in-process tests measure, so they run unmeasured, as the
bench programs do, and the suite keeps within its time.
"""

from __future__ import annotations

from collections.abc import Mapping

# Coverage's .pth file starts measuring a child only when one of these is set and not empty.
_OFF = {"COVERAGE_PROCESS_CONFIG": "", "COVERAGE_PROCESS_START": ""}


def unmeasured(env: Mapping[str, str]) -> dict[str, str]:
    """`env` (a whole environment, or what a child adds to its parent's) with coverage's
    start-up variables emptied: a child started with it is not measured."""
    return {**env, **_OFF}
