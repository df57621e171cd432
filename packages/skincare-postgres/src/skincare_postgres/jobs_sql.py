"""Every statement on the jobs table, with psycopg `%(name)s` placeholders.

They run through `execution.py`: the claim and settle statements on the queue's dedicated
connections, `OUTBOX_ADD` in a unit of work's transaction, `ENQUEUE` and the dead-letter
statements on a pooled autocommit connection. Results are read by column name.
"""

from __future__ import annotations

from typing import NamedTuple


class Claimed(NamedTuple):
    """A row `CLAIM` returns: the job as stored and its new lease."""

    id: str
    body: str
    attempts: int
    receipt: str


# One statement claims a batch: SKIP LOCKED lets claimers pass each other; the lease pushes
# available_at forward, so the partial index ix_jobs_claim also finds expired leases.
CLAIM = """
UPDATE jobs SET attempts = attempts + 1, receipt = gen_random_uuid(),
    available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
WHERE id = ANY(ARRAY(
    SELECT id FROM jobs WHERE status = 'ready' AND available_at <= now()
    ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED))
RETURNING id, body, attempts, receipt::text AS receipt
"""

NEXT_VISIBLE = """
SELECT EXTRACT(EPOCH FROM min(available_at) - now())::float8 AS seconds
FROM jobs WHERE status = 'ready'
"""

# Receipts are fresh UUIDs per lease: a row whose current receipt is listed was leased by it.
ACK = "DELETE FROM jobs WHERE id = ANY(%(ids)s) AND receipt = ANY(%(receipts)s::uuid[])"

MARK_SENT = "DELETE FROM jobs WHERE receipt = ANY(%(receipts)s::uuid[])"

RELEASE = """
UPDATE jobs SET available_at = now(), receipt = NULL, lease_expires_at = NULL
WHERE receipt = ANY(%(receipts)s::uuid[])
"""

NACK = """
WITH moved AS (
    UPDATE jobs SET available_at = now() + %(delay)s, receipt = NULL, lease_expires_at = NULL
    WHERE id = %(id)s AND receipt = %(receipt)s::uuid RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM moved
"""

EXTEND = """
UPDATE jobs SET available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
WHERE id = %(id)s AND receipt = %(receipt)s::uuid
"""

DEAD_LETTER = """
UPDATE jobs SET status = 'dead', last_error = %(reason)s, dead_at = now(), receipt = NULL,
    lease_expires_at = NULL
WHERE id = %(id)s AND receipt = %(receipt)s::uuid
"""

BURY_UNREADABLE = """
UPDATE jobs SET status = 'dead', last_error = %(reason)s, dead_at = now(), receipt = NULL
WHERE id = %(id)s
"""

# A job id already queued is skipped; idle workers are woken once per statement.
ENQUEUE = """
WITH added AS (
    INSERT INTO jobs (id, type, body)
    SELECT * FROM unnest(
        CAST(%(ids)s AS text[]), CAST(%(types)s AS text[]), CAST(%(bodies)s AS text[]))
    ON CONFLICT (id) DO NOTHING RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM (SELECT 1 FROM added LIMIT 1) AS any_added
"""

# NOTIFY inside a transaction is delivered only when it commits, like the row itself.
OUTBOX_ADD = """
WITH added AS (INSERT INTO jobs (id, type, body) VALUES (%(id)s, %(type)s, %(body)s) RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM added
"""

DEAD_COUNT = "SELECT count(*) AS dead FROM jobs WHERE status = 'dead'"

_DEAD_COLUMNS = (
    "SELECT id AS job_id, type AS job_type, body, attempts, last_error, dead_at FROM jobs"
    " WHERE status = 'dead'"
)

DEAD_LIST = (
    f"{_DEAD_COLUMNS} AND (CAST(%(type)s AS text) IS NULL OR type = %(type)s)"
    " ORDER BY dead_at, id LIMIT %(limit)s"
)

DEAD_GET = f"{_DEAD_COLUMNS} AND id = %(id)s"

# Redriven jobs start over: attempts 0, visible now, and idle workers are woken.
REDRIVE = """
WITH moved AS (
    UPDATE jobs SET status = 'ready', attempts = 0, available_at = now(), dead_at = NULL,
        receipt = NULL, lease_expires_at = NULL
    WHERE status = 'dead' AND (CAST(%(id)s AS text) IS NULL OR id = %(id)s)
        AND (CAST(%(type)s AS text) IS NULL OR type = %(type)s)
    RETURNING 1)
SELECT (SELECT count(*) FROM moved) AS moved, pg_notify(%(channel)s, '')
"""

PURGE = """
WITH gone AS (DELETE FROM jobs WHERE status = 'dead' RETURNING 1)
SELECT count(*) AS purged FROM gone
"""
