"""Dead letters grouped by error for the ops page: each group newest first, and the group whose
last death is newest first of all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from skincare_core.jobs.job import Job
from skincare_core.jobs.ops import group_by_error
from skincare_core.jobs.ports import DeadLetter

T0 = datetime(2026, 12, 4, tzinfo=UTC)


def dead(job_id: str, error: str, minute: int) -> DeadLetter:
    return DeadLetter(Job(id=job_id, type="t"), 5, error, T0 + timedelta(minutes=minute))


def test_groups_and_their_jobs_are_newest_first() -> None:
    items = [dead("a", "A", 1), dead("b", "B", 2), dead("c", "A", 3), dead("d", "B", 0)]
    groups = group_by_error(items)
    assert [(g.error, [d.job.id for d in g.jobs]) for g in groups] == [
        ("A", ["c", "a"]),
        ("B", ["b", "d"]),
    ]
    assert groups[0].newest == T0 + timedelta(minutes=3)


def test_no_dead_jobs_no_groups() -> None:
    assert group_by_error([]) == ()
