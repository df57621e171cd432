"""The statements of the dead letters (`dead_letters.py`) on the jobs table's dead rows, with
psycopg `%(name)s` placeholders; each runs on a pooled autocommit connection."""

from __future__ import annotations

DEAD_COUNT = """
SELECT count(*) AS dead FROM jobs
WHERE status = 'dead' AND (CAST(%(queue)s AS text) IS NULL OR queue = %(queue)s)
"""

_DEAD_COLUMNS = (
    "SELECT id AS job_id, type AS job_type, body, attempts, last_error, dead_at, queue"
    " FROM jobs WHERE status = 'dead'"
)

DEAD_LIST = (
    f"{_DEAD_COLUMNS} AND (CAST(%(type)s AS text) IS NULL OR type = %(type)s)"
    " AND (CAST(%(queue)s AS text) IS NULL OR queue = %(queue)s)"
    " ORDER BY dead_at, id LIMIT %(limit)s"
)

DEAD_GET = f"{_DEAD_COLUMNS} AND id = %(id)s"

# Redriven jobs start over in the queue they died in: attempts and snoozes 0, visible now, its
# idle workers woken. Their attempts so far are in the history's row of the run that died.
REDRIVE = """
WITH moved AS (
    UPDATE jobs SET status = 'ready', attempts = 0, snoozes = 0, available_at = now(),
        dead_at = NULL, receipt = NULL, lease_expires_at = NULL, attempt_log = NULL
    WHERE status = 'dead' AND (CAST(%(id)s AS text) IS NULL OR id = %(id)s)
        AND (CAST(%(type)s AS text) IS NULL OR type = %(type)s)
        AND (CAST(%(queue)s AS text) IS NULL OR queue = %(queue)s)
    RETURNING queue),
woken AS (
    SELECT pg_notify(%(channel)s || '.' || queue, '') FROM (SELECT DISTINCT queue FROM moved) q)
SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM woken) AS woken
"""

PURGE = """
WITH gone AS (DELETE FROM jobs WHERE status = 'dead' RETURNING 1)
SELECT count(*) AS purged FROM gone
"""
