"""The `job_drain` pytest fixture, loaded by pytest itself (entry point `pytest11`) wherever
skincare-core is installed; nothing else in skincare-core needs pytest.

Override `job_handlers` in your conftest.py to return your `Definitions` (or a `Router`); each
test asking for `job_drain` gets a fresh `skincare_core.testing.drain.JobDrain` on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from skincare_core.jobs.definitions import Definitions
    from skincare_core.jobs.router import Router
    from skincare_core.testing.drain import JobDrain


@pytest.fixture
def job_handlers() -> Router | Definitions:
    """What `job_drain` runs jobs through: override it in your conftest.py."""
    raise pytest.UsageError("job_drain needs your handlers: define a job_handlers fixture")


@pytest.fixture
def job_drain(job_handlers: Router | Definitions) -> JobDrain:
    """A fresh JobDrain on `job_handlers`, its clock at 2026-12-01 09:00 UTC."""
    # Imported here, not at the top: pytest loads this module before coverage starts.
    from skincare_core.testing.drain import JobDrain

    return JobDrain(job_handlers)
