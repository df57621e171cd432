"""Every statement on the jobs table, with psycopg `%(name)s` placeholders.

They run through `execution.py`: the claim and settle statements on the queue's dedicated
connections, `OUTBOX_ADD` in a unit of work's transaction, `ENQUEUE` and `CANCEL` on a pooled
autocommit connection. Results are read by column name. Enqueues do
not NOTIFY in their own statement: `notifier.py` wakes the queues after the commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from skincare_postgres.jobs.outcomes_sql import COUNT_DONE, COUNT_FAILED


class Claimed(NamedTuple):
    """A row `CLAIM` returns: the job as stored and its new lease."""

    id: str
    body: str
    attempts: int
    receipt: str
    due_at: datetime
    snoozes: int


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
    due.available_at AS due_at, jobs.snoozes
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

# Settlements take a batch as parallel arrays (row ids and lease receipts, plus a delay or a
# reason each) in binary, joined to the rows by unnest: one statement a batch. A row is settled
# only while its current receipt is the one listed (a fresh UUID per lease), so a stale receipt,
# or a batch sent again after its first run committed, changes nothing.
_LEASES = "CAST(%(ids)b AS text[]), CAST(CAST(%(receipts)b AS text[]) AS uuid[])"
_HELD = "jobs.id = l.id AND jobs.receipt = l.receipt"

# The deleted rows are counted done in the same statement.
ACK = f"""
WITH settled AS (
    DELETE FROM jobs USING unnest({_LEASES}) AS l(id, receipt) WHERE {_HELD}
    RETURNING jobs.queue)
{COUNT_DONE}"""

# Each job is visible again after its own delay; the queue's idle workers are woken. A snooze
# (l.snooze = 1) gives back the attempt its claim counted and counts a snooze instead.
RETRY = f"""
WITH moved AS (
    UPDATE jobs SET available_at = now() + l.delay, receipt = NULL, lease_expires_at = NULL,
        attempts = jobs.attempts - l.snooze, snoozes = jobs.snoozes + l.snooze
    FROM unnest({_LEASES}, CAST(%(delays)b AS interval[]), CAST(%(snoozes)b AS int[]))
        AS l(id, receipt, delay, snooze)
    WHERE {_HELD}
    RETURNING 1)
SELECT pg_notify(%(channel)s, '') WHERE EXISTS (SELECT 1 FROM moved)
"""

EXTEND = f"""
UPDATE jobs SET available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
FROM unnest({_LEASES}) AS l(id, receipt) WHERE {_HELD}
"""

# A dead job no longer holds its unique key: a new job may take it (and a redrive keeps none).
# It is counted failed in the same statement.
DEAD_LETTER = f"""
WITH settled AS (
    UPDATE jobs SET status = 'dead', last_error = l.reason, dead_at = now(), receipt = NULL,
        lease_expires_at = NULL, unique_key = NULL
    FROM unnest({_LEASES}, CAST(%(reasons)b AS text[])) AS l(id, receipt, reason)
    WHERE {_HELD}
    RETURNING jobs.queue)
{COUNT_FAILED}"""

# A job id already stored, or a unique key a live job holds, is skipped (ON CONFLICT without a
# target covers the primary key and uq_jobs_unique_key). The queues that got a job are returned:
# the caller wakes them after the commit (`notifier.py`), not with a NOTIFY in this statement.
# A job is due at its not_before time, else its delay from now (the database's clock). The arrays
# go in binary (%(name)b): psycopg's text format escapes every element through a regex, which
# costs more than the insert itself on a large batch.
ENQUEUE = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
    SELECT id, type, body, queue, unique_key, COALESCE(not_before, now() + delay)
    FROM unnest(CAST(%(ids)b AS text[]), CAST(%(types)b AS text[]), CAST(%(bodies)b AS text[]),
        CAST(%(queues)b AS text[]), CAST(%(keys)b AS text[]),
        CAST(%(not_befores)b AS timestamptz[]), CAST(%(delays)b AS interval[]))
        AS row(id, type, body, queue, unique_key, not_before, delay)
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

# `enqueue_in_transaction`'s: the NOTIFY rides in the caller's transaction, which PostgreSQL
# sends at its commit and drops on a rollback.
OUTBOX_ADD_NOTIFY = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
    VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
        COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s))
    ON CONFLICT DO NOTHING RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM added
"""
