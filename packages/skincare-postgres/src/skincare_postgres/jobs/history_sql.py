"""The statements of the job history (`history.py`): searches of job_history and of the live rows
of the jobs table, and the cleaner's prune. The settles that write job_history are in
`queue_sql.py` (`*_KEEPING`) and `ledger_sql.py`.

A search is put together from fixed fragments, only those its query needs, so each is planned
for its own filters (an `x IS NULL OR` filter would leave a generic plan no index fits).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


def attempt_entry(error: str) -> str:
    """An attempt_log entry (a one-element array) for the attempt of the row `jobs` ending now
    with `error` (SQL), run by %(worker)s."""
    return (
        "jsonb_build_array(jsonb_build_object('start', COALESCE(jobs.started_at, now()),"
        f" 'end', now(), 'worker', CAST(%(worker)s AS text), 'error', {error}))"
    )


# The job's payload and headers from its body: a body the worker decoded (so JSON) as it is; any
# other (an unreadable one buried at claim, a cancelled or SQS ledger row) only if it is JSON.
DOC = "CAST(s.body AS jsonb)"
SAFE_DOC = "CASE WHEN pg_input_is_valid(s.body, 'jsonb') THEN CAST(s.body AS jsonb) END"


def keep_finished(state: str, doc: str) -> str:
    """A CTE `kept` inserting into job_history the rows of the CTE `settled` (their id, type,
    queue, body, created_at, attempts and attempt_log, and their last attempt's started_at,
    worker and error), ended now in `state` (SQL), their arguments read from `doc`. OFFSET 0
    keeps the planner from pulling the subquery up, which would parse the body once for each
    of its three uses."""
    return f"""kept AS (
    INSERT INTO job_history (id, type, queue, state, args, enqueued_at, started_at, finished_at,
        attempts, worker, attempt_log, last_error, request_id, trace_id)
    SELECT s.id, s.type, s.queue, {state}, COALESCE(d.doc -> 'payload', '{{}}'), s.created_at,
        s.started_at, now(), s.attempts, s.worker, s.attempt_log, s.error,
        d.doc -> 'headers' ->> 'request_id',
        NULLIF(split_part(d.doc -> 'headers' ->> 'traceparent', '-', 2), '')
    FROM settled s, LATERAL (SELECT {doc} AS doc OFFSET 0) d)"""


class HistoryRow(NamedTuple):
    """A job as a search returns it, live or finished: the columns `JobRecord` is built from.
    `args` is the payload (jsonb), `attempt_log` the attempts before the last (a JSON array),
    `started_at` and `worker` the last attempt's (a live job's: the one running now)."""

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
    started_at: datetime | None
    worker: str | None


_FINISHED_COLUMNS = """id, type, queue, state, args, enqueued_at,
    CAST(NULL AS timestamptz) AS due_at, finished_at, attempts, attempt_log, last_error,
    request_id, trace_id, started_at, worker"""

# Each filter of a finished job, by the HistoryQuery field it serves.
FINISHED_FILTERS = {
    "job_id": "id = %(job_id)s",
    "job_type": "type = %(job_type)s",
    "state": "state = %(state)s",
    "queue": "queue = %(queue)s",
    "since": "finished_at >= %(since)s",
    "until": "finished_at < %(until)s",
    "args": "(args @> %(args)s OR args @> %(typed_args)s)",
}
# Dead and cancelled rows are in ix_job_history_failed_finished_at; the planner uses a partial
# index only where the query states its predicate.
FAILED = "state <> 'done'"
_NEWEST = "ORDER BY finished_at DESC, id DESC LIMIT %(limit)s"


def finished_search(filters: list[str]) -> str:
    """Finished jobs matching `filters` (at least one that an index serves: the id, the
    arguments, the type, a failed state), newest first."""
    return f"SELECT {_FINISHED_COLUMNS} FROM job_history WHERE {' AND '.join(filters)} {_NEWEST}"


# The distinct types of job_history, one index descent each (a loose index scan on
# ix_job_history_type_finished_at): a walk per type stands in for an index on finished_at alone,
# which every ack would pay for.
_TYPES = """types AS (
    (SELECT type FROM job_history ORDER BY type LIMIT 1)
    UNION ALL
    SELECT (SELECT h.type FROM job_history h WHERE h.type > t.type ORDER BY h.type LIMIT 1)
    FROM types t WHERE t.type IS NOT NULL)"""


def finished_by_type(filters: list[str]) -> str:
    """Finished jobs matching `filters` (none an index serves), newest first: each type's
    newest on its index, merged."""
    where = " AND ".join(["type = t.type", *filters])
    return f"""
WITH RECURSIVE {_TYPES}
SELECT found.* FROM types t, LATERAL (
    SELECT {_FINISHED_COLUMNS} FROM job_history WHERE {where} {_NEWEST}) found
WHERE t.type IS NOT NULL
{_NEWEST}"""


class LiveRows(NamedTuple):
    """Which rows of the jobs table a backend's live jobs are (`where`), the state of one
    (`state`, a CASE on its columns), the job's document (`doc`: its body as jsonb, NULL where
    the row does not hold it), its deliveries (`attempts`) and when it runs next (`due`,
    unless it runs now)."""

    where: str
    state: str
    doc: str
    attempts: str = "attempts"
    due: str = "available_at"


# The live rows of the Postgres queue (status 'ready'): running while a lease holds, retrying
# once an attempt ran, scheduled until due. Their bodies are read only when valid JSON.
QUEUE_LIVE_ROWS = LiveRows(
    where="status = 'ready'",
    state="""CASE WHEN receipt IS NOT NULL AND lease_expires_at > now() THEN 'running'
        WHEN attempts > 0 THEN 'retrying' WHEN available_at > now() THEN 'scheduled'
        ELSE 'enqueued' END""",
    doc="CASE WHEN pg_input_is_valid(body, 'jsonb') THEN CAST(body AS jsonb) END",
)

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
    "args": "(doc -> 'payload' @> %(args)s OR doc -> 'payload' @> %(typed_args)s)",
}


def live_search(rows: LiveRows, filters: list[str], outer: list[str]) -> str:
    """The live jobs of `rows` matching the filters, newest first by enqueue time."""
    inner = " AND ".join([rows.where, *filters])
    where = " AND ".join(outer) if outer else "true"
    return f"""
SELECT id, type, queue, state, COALESCE(doc -> 'payload', '{{}}') AS args, enqueued_at, due_at,
    CAST(NULL AS timestamptz) AS finished_at, attempts, attempt_log,
    attempt_log -> -1 ->> 'error' AS last_error, doc -> 'headers' ->> 'request_id' AS request_id,
    NULLIF(split_part(doc -> 'headers' ->> 'traceparent', '-', 2), '') AS trace_id, started_at,
    CAST(NULL AS text) AS worker
FROM (
    SELECT id, type, queue, {rows.attempts} AS attempts, attempt_log, created_at AS enqueued_at,
        {rows.doc} AS doc,
        {rows.state} AS state,
        CASE WHEN {rows.state} = 'running' THEN NULL ELSE {rows.due} END AS due_at,
        CASE WHEN {rows.state} = 'running' THEN started_at END AS started_at
    FROM jobs WHERE {inner}) live
WHERE {where}
ORDER BY enqueued_at DESC, id DESC LIMIT %(limit)s
"""


# One process at a time: a statement deletes only while it holds the transaction's advisory
# lock (hashtext of a fixed name), so a second cleaner's statement deletes nothing and says so.
# Rows go by ctid, a batch at a time: done and cancelled ones type by type on
# ix_job_history_type_finished_at, dead ones on ix_job_history_failed_finished_at.
_LEADER = """leader AS (
    SELECT pg_try_advisory_xact_lock(hashtext('skincare.job_history.prune')) AS held)"""
_PRUNED = "SELECT (SELECT held FROM leader) AS held, count(*) AS pruned FROM gone"

# The argument index keeps an entry for every value it ever held (a vacuum empties an entry's
# postings but never removes the entry), so under a steady load with new order ids it grows
# while the heap stays flat: the cleaner rebuilds it now and then, without blocking writes.
# One rebuild at a time across processes (a session lock), and a build a failed one left
# behind (invalid, named _ccnew) is dropped first.
REBUILD_LOCK = "SELECT pg_try_advisory_lock(hashtext('skincare.job_history.rebuild')) AS held"
REBUILD_UNLOCK = "SELECT pg_advisory_unlock(hashtext('skincare.job_history.rebuild'))"
DROP_FAILED_REBUILD = "DROP INDEX CONCURRENTLY IF EXISTS ix_job_history_args_ccnew"
REBUILD_ARGS_INDEX = "REINDEX INDEX CONCURRENTLY ix_job_history_args"

PRUNE_DONE = f"""
WITH RECURSIVE {_TYPES},
{_LEADER},
gone AS (
    DELETE FROM job_history WHERE ctid = ANY(ARRAY(
        SELECT old.ctid FROM types t, LATERAL (
            SELECT h.ctid FROM job_history h
            WHERE h.type = t.type AND h.finished_at < now() - %(kept)s AND h.state <> 'dead'
            ORDER BY h.finished_at LIMIT %(batch)s) old
        WHERE t.type IS NOT NULL AND (SELECT held FROM leader)
        LIMIT %(batch)s))
    RETURNING 1)
{_PRUNED}
"""

PRUNE_DEAD = f"""
WITH {_LEADER},
gone AS (
    DELETE FROM job_history WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM job_history
        WHERE (SELECT held FROM leader) AND {FAILED} AND state = 'dead'
            AND finished_at < now() - %(kept)s
        LIMIT %(batch)s))
    RETURNING 1)
{_PRUNED}
"""
