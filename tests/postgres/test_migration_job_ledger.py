"""The job-ledger migration keeps every job row; going back drops only the SQS ledger rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from skincare_postgres import downgrade, upgrade

JOB_LEDGER = "0004"
"""The revision that added the SQS ledger statuses."""

_ADD = (
    "INSERT INTO jobs (id, type, body, status, unique_key) VALUES ('{0}', 't', '{{}}', '{1}', {2})"
)
_IDS = "SELECT id, status FROM jobs ORDER BY id"


def _run(url: str, *statements: str) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            results = [conn.execute(text(sql)) for sql in statements]
            return [tuple(row) for row in results[-1]] if results[-1].returns_rows else []
    finally:
        engine.dispose()


@pytest.mark.slow
def test_jobs_survive_both_ways_and_a_sent_job_holds_its_key(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    upgrade(url, f"{JOB_LEDGER}-1")
    _run(url, _ADD.format("a", "ready", "'k'"), _ADD.format("b", "dead", "NULL"))
    upgrade(url, JOB_LEDGER)
    _run(url, _ADD.format("c", "sent", "'s'"))
    with pytest.raises(IntegrityError):
        _run(url, _ADD.format("d", "ready", "'s'"))
    assert _run(url, _IDS) == [("a", "ready"), ("b", "dead"), ("c", "sent")]
    downgrade(url, f"{JOB_LEDGER}-1")
    assert _run(url, _IDS) == [("a", "ready"), ("b", "dead")]
    upgrade(url, JOB_LEDGER)
    assert _run(url, _IDS) == [("a", "ready"), ("b", "dead")]
