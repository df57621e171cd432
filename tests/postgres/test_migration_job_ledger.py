"""The job-ledger migration keeps every job row; going back drops only the SQS ledger rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.exc import IntegrityError

from skincare_postgres import downgrade, upgrade
from tests.postgres.statements import run_sql

JOB_LEDGER = "0004"
"""The revision that added the SQS ledger statuses."""

_ADD = (
    "INSERT INTO jobs (id, type, body, status, unique_key) VALUES ('{0}', 't', '{{}}', '{1}', {2})"
)
_IDS = "SELECT id, status FROM jobs ORDER BY id"


@pytest.mark.slow
def test_jobs_survive_both_ways_and_a_sent_job_holds_its_key(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{JOB_LEDGER}-1")
    run_sql(url, _ADD.format("a", "ready", "'k'"), _ADD.format("b", "dead", "NULL"))
    upgrade(url, JOB_LEDGER)
    run_sql(url, _ADD.format("c", "sent", "'s'"))
    with pytest.raises(IntegrityError):
        run_sql(url, _ADD.format("d", "ready", "'s'"))
    assert run_sql(url, _IDS) == [("a", "ready"), ("b", "dead"), ("c", "sent")]
    downgrade(url, f"{JOB_LEDGER}-1")
    assert run_sql(url, _IDS) == [("a", "ready"), ("b", "dead")]
    upgrade(url, JOB_LEDGER)
    assert run_sql(url, _IDS) == [("a", "ready"), ("b", "dead")]
