"""The statements of the job history (`history.py`): searches of job_history and of the live rows
of the jobs table, and the cleaner's prune. The settles that write job_history are in
`queue_sql.py` (`*_KEEPING`) and `ledger_sql.py`.

A search is put together from fixed fragments, only those its query needs, so each is planned
for its own filters (an `x IS NULL OR` filter would leave a generic plan no index fits).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class HistoryRow(NamedTuple):
    """A job as a search returns it, live or finished: the columns `JobRecord` is built from.
    `args` is the payload (jsonb), `attempt_log` the settled attempts (a JSON array),
    `running_since` the start of an attempt still running."""

    id: str
    type: str
    queue: str
    state: str
    args: object
    enqueued_at: datetime | None
    due_at: datetime | None
    finished_at: datetime | None
    attempts: int
    attempt_log: object
    last_error: str | None
    request_id: str | None
    trace_id: str | None
    running_since: datetime | None


FINISHED_COLUMNS = """id, type, queue, state, args, enqueued_at,
    CAST(NULL AS timestamptz) AS due_at, finished_at, attempts, attempt_log, last_error,
    request_id, trace_id,
    CAST(NULL AS timestamptz) AS running_since"""

# Each filter of a finished job, by the HistoryQuery field it serves.
FINISHED_FILTERS = {
    "job_id": "id = %(job_id)s",
    "job_type": "type = %(job_type)s",
    "queue": "queue = %(queue)s",
    "since": "finished_at >= %(since)s",
    "until": "finished_at < %(until)s",
    "args": "args @> %(args)s",
}


def finished_search(state_filter: str, filters: list[str]) -> str:
    """One state's finished jobs matching `filters`, newest first, at most %(limit)s: walks
    ix_job_history_state_finished_at (or the type's index, or the GIN index for args)."""
    where = " AND ".join([state_filter, *filters])
    return (
        f"(SELECT {FINISHED_COLUMNS} FROM job_history WHERE {where}"
        " ORDER BY finished_at DESC, id DESC LIMIT %(limit)s)"
    )


def union_newest(branches: list[str]) -> str:
    """The newest %(limit)s of the branches' rows together."""
    return (
        f"SELECT * FROM ({' UNION ALL '.join(branches)}) found"
        " ORDER BY finished_at DESC, id DESC LIMIT %(limit)s"
    )


class LiveRows(NamedTuple):
    """Which rows of the jobs table a backend's live jobs are (`where`), and the state of one
    (`state`, a CASE on its columns)."""

    where: str
    state: str


# The live rows of the Postgres queue (status 'ready'): running while a lease holds, retrying
# once an attempt ran, scheduled until due. Their bodies are read only when valid JSON.
QUEUE_LIVE_ROWS = LiveRows(
    where="status = 'ready'",
    state="""CASE WHEN receipt IS NOT NULL AND lease_expires_at > now() THEN 'running'
        WHEN attempts > 0 THEN 'retrying' WHEN available_at > now() THEN 'scheduled'
        ELSE 'enqueued' END""",
)

_LIVE_DOC = "CASE WHEN pg_input_is_valid(body, 'jsonb') THEN CAST(body AS jsonb) END"

LIVE_FILTERS = {
    "job_id": "id = %(job_id)s",
    "job_type": "type = %(job_type)s",
    "queue": "queue = %(queue)s",
    "since": "created_at >= %(since)s",
    "until": "created_at < %(until)s",
}
# Filters on the computed columns, outside the subquery.
LIVE_OUTER_FILTERS = {
    "state": "state = %(state)s",
    "args": "doc -> 'payload' @> %(args)s",
}


def live_search(rows: LiveRows, filters: list[str], outer: list[str]) -> str:
    """The live jobs of `rows` matching the filters, newest first by enqueue time, at most
    %(limit)s."""
    inner = " AND ".join([rows.where, *filters])
    where = " AND ".join(outer) if outer else "true"
    return f"""
SELECT id, type, queue, state, COALESCE(doc -> 'payload', '{{}}') AS args, enqueued_at, due_at,
    CAST(NULL AS timestamptz) AS finished_at, attempts, COALESCE(attempt_log, '[]') AS attempt_log,
    attempt_log -> -1 ->> 'error' AS last_error, doc -> 'headers' ->> 'request_id' AS request_id,
    NULLIF(split_part(doc -> 'headers' ->> 'traceparent', '-', 2), '') AS trace_id, running_since
FROM (
    SELECT id, type, queue, attempts, attempt_log, created_at AS enqueued_at, {_LIVE_DOC} AS doc,
        {rows.state} AS state,
        CASE WHEN receipt IS NULL OR lease_expires_at <= now() THEN available_at END AS due_at,
        CASE WHEN receipt IS NOT NULL AND lease_expires_at > now() THEN started_at END
            AS running_since
    FROM jobs WHERE {inner}) live
WHERE {where}
ORDER BY enqueued_at DESC, id DESC LIMIT %(limit)s
"""


# One process at a time: the statement deletes only while it holds the transaction's advisory
# lock (hashtext of a fixed name), so a second cleaner's statement deletes nothing and says so.
# Rows go by ctid, a batch at a time, oldest state's rows found on ix_job_history_state_finished_at.
PRUNE = """
WITH leader AS (
    SELECT pg_try_advisory_xact_lock(hashtext('skincare.job_history.prune')) AS held),
gone AS (
    DELETE FROM job_history WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM job_history
        WHERE (SELECT held FROM leader) AND state = %(state)s AND finished_at < now() - %(kept)s
        LIMIT %(batch)s))
    RETURNING 1)
SELECT (SELECT held FROM leader) AS held, count(*) AS pruned FROM gone
"""
