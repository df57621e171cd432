"""Every statement on the jobs table, with psycopg `%(name)s` placeholders.

They run through `execution.py`: the claim and settle statements on the queue's dedicated
connections, `OUTBOX_ADD` in a unit of work's transaction, `ENQUEUE` and the dead-letter
statements on a pooled autocommit connection. Results are read by column name. Enqueues do
not NOTIFY in their own statement: `notifier.py` wakes the queues after the commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from skincare_postgres.outcomes_sql import COUNT_DONE, COUNT_FAILED


class Claimed(NamedTuple):
    """A row `CLAIM` returns: the job as stored and its new lease."""

    id: str
    body: str
    attempts: int
    receipt: str
    due_at: datetime


# One statement claims a batch of one queue: SKIP LOCKED lets claimers pass each other; the
# lease pushes available_at forward, so the partial index ix_jobs_claim (queue, available_at)
# also finds expired leases, and walks only this queue's rows in due order. The CTE (run once:
# it locks) keeps each row's available_at from before the lease: when the job became due.
# `floor` (claim_floor.py) skips the index entries of finished jobs a held xmin keeps; with a
# custom plan per run a NULL floor folds away.
# The update finds the locked rows by ctid (a TID scan, one heap fetch each), not by id: a join
# on id is planned from the row estimate, and an analyze that finds almost no live rows among
# the tuples a held xmin keeps makes one primary-key lookup look dearer than a scan of the whole
# table, which the join then ran once per claimed row. A row a concurrent commit moved to a
# newer version after the statement's snapshot is left ready for the next claim.
CLAIM = """
WITH due AS (
    SELECT ctid, available_at FROM jobs
    WHERE status = 'ready' AND queue = %(queue)s AND available_at <= now()
        AND (CAST(%(floor)s AS timestamptz) IS NULL OR available_at >= %(floor)s)
    ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
UPDATE jobs SET attempts = attempts + 1, receipt = gen_random_uuid(),
    available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
FROM due WHERE jobs.ctid = due.ctid
RETURNING jobs.id, jobs.body, jobs.attempts, jobs.receipt::text AS receipt,
    due.available_at AS due_at
"""

# The earliest due time as the first row along ix_jobs_claim: ordered, so the claim
# connection's enable_sort=off keeps it on the index whatever the row estimate. A min() could
# be planned as a bitmap scan reading every entry past the floor (every lease's included).
NEXT_VISIBLE = """
SELECT EXTRACT(EPOCH FROM (
    SELECT available_at FROM jobs
    WHERE status = 'ready' AND queue = %(queue)s
        AND (CAST(%(floor)s AS timestamptz) IS NULL OR available_at >= %(floor)s)
    ORDER BY available_at LIMIT 1) - now())::float8 AS seconds
"""

# A running job (a live lease) is left alone: only a waiting or scheduled row is deleted.
CANCEL = """
DELETE FROM jobs WHERE id = %(id)s AND queue = %(queue)s AND status = 'ready'
    AND (receipt IS NULL OR lease_expires_at <= now())
RETURNING 1
"""

# Receipts are fresh UUIDs per lease: a row whose current receipt is listed was leased by it.
# The (id, receipt) pairs come as one JSON text: psycopg dumps a Python list element by element
# (about 3 us each), json.dumps does it in C. The deleted rows are counted done in the same
# statement: one row update a batch.
ACK = f"""
WITH settled AS (
    DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT jsonb_array_elements(%(acks)s::jsonb) ->> 0))
        AND receipt = ANY(ARRAY(SELECT (jsonb_array_elements(%(acks)s::jsonb) ->> 1)::uuid))
    RETURNING queue)
{COUNT_DONE}"""

NACK = """
WITH moved AS (
    UPDATE jobs SET available_at = now() + %(delay)s, receipt = NULL, lease_expires_at = NULL
    WHERE id = %(id)s AND receipt = %(receipt)s::uuid RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM moved
"""

EXTEND = """
UPDATE jobs SET available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
WHERE id = ANY(ARRAY(SELECT jsonb_array_elements(%(leases)s::jsonb) ->> 0))
    AND receipt = ANY(ARRAY(SELECT (jsonb_array_elements(%(leases)s::jsonb) ->> 1)::uuid))
"""

# A dead job no longer holds its unique key: a new job may take it (and a redrive keeps none).
# It is counted failed in the same statement.
DEAD_LETTER = f"""
WITH settled AS (
    UPDATE jobs SET status = 'dead', last_error = %(reason)s, dead_at = now(), receipt = NULL,
        lease_expires_at = NULL, unique_key = NULL
    WHERE id = %(id)s AND receipt = %(receipt)s::uuid
    RETURNING queue)
{COUNT_FAILED}"""

BURY_UNREADABLE = f"""
WITH settled AS (
    UPDATE jobs SET status = 'dead', last_error = %(reason)s, dead_at = now(), receipt = NULL,
        unique_key = NULL
    WHERE id = %(id)s
    RETURNING queue)
{COUNT_FAILED}"""

# A job id already stored, or a unique key a live job holds, is skipped (ON CONFLICT without a
# target covers the primary key and uq_jobs_unique_key). The queues that got a job are returned:
# the caller wakes them after the commit (`notifier.py`), not with a NOTIFY in this statement.
# A job is due at its not_before time, else `delay` from now (the database's clock). The arrays
# go in binary (%(name)b): psycopg's text format escapes every element through a regex, which
# took longer than the insert itself for 10,000 jobs.
ENQUEUE = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
    SELECT id, type, body, queue, unique_key, COALESCE(not_before, now() + %(delay)s)
    FROM unnest(CAST(%(ids)b AS text[]), CAST(%(types)b AS text[]), CAST(%(bodies)b AS text[]),
        CAST(%(queues)b AS text[]), CAST(%(keys)b AS text[]),
        CAST(%(not_befores)b AS timestamptz[]))
        AS row(id, type, body, queue, unique_key, not_before)
    ON CONFLICT DO NOTHING RETURNING queue)
SELECT count(*) AS added, COALESCE(array_agg(DISTINCT queue), '{}') AS queues FROM added
"""

# In the business transaction, without NOTIFY: a transaction that notifies takes a
# database-wide lock at commit. The unit of work wakes the queue once it has committed.
OUTBOX_ADD = """
INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
    COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s))
ON CONFLICT DO NOTHING RETURNING 1
"""

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

# Redriven jobs start over in the queue they died in: attempts 0, visible now, its idle workers
# woken.
REDRIVE = """
WITH moved AS (
    UPDATE jobs SET status = 'ready', attempts = 0, available_at = now(), dead_at = NULL,
        receipt = NULL, lease_expires_at = NULL
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
