"""Reading a job row's body back: the job it holds, which must be the row's own."""

from __future__ import annotations

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job


def decode_row_body(row_id: str, body: str) -> Job:
    """The job stored in row `row_id`; InvalidJob if the body does not decode, or names another
    job id than the row's (a row written by another program): settling by the body's id would
    reach no row, so such a row could never be settled."""
    job = decode_job(body)
    if job.id != row_id:
        raise InvalidJob(f"the body's job id {job.id!r} is not its row's id {row_id!r}")
    return job
