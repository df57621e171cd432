"""The warehouse team's test configuration: the job types the `job_drain` fixture runs."""

from __future__ import annotations

import pytest
from warehouse_worker import DEFINITIONS

from skincare_core.jobs import Definitions


@pytest.fixture
def job_handlers() -> Definitions:
    """What skincare's `job_drain` fixture runs jobs through: the worker's definitions."""
    return DEFINITIONS
