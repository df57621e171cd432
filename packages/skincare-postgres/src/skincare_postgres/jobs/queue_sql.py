"""Every statement on the jobs table, with psycopg `%(name)s` placeholders.

They run through `execution.py`: the claim and settle statements on the queue's dedicated
connections, `OUTBOX_ADD` in a unit of work's transaction, `ENQUEUE` and `CANCEL` on a pooled
autocommit connection. Results are read by column name. Enqueues do
not NOTIFY in their own statement: `notifier.py` wakes the queues after the commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple

from skincare_core.jobs.priority import PRIORITIES
from skincare_postgres.jobs.history_sql import DOC, SAFE_DOC, attempt_entry, keep_finished
from skincare_postgres.jobs.outcomes_sql import COUNT_DONE, COUNT_FAILED


class Claimed(NamedTuple):
    """A row `CLAIM` returns: the job as stored and its new lease."""

    id: str
    body: str
    attempts: int
    receipt: str
    due_at: datetime
    priority: int
    snoozes: int


# One statement claims a batch of one queue: SKIP LOCKED lets claimers pass each other; the
# lease pushes available_at forward, so the partial index ix_jobs_claim (queue, priority,
# available_at) also finds expired leases. For each priority, most urgent first, the lateral
# subquery walks that priority's range of the index in due order from its floor
# (claim_floor.py: past the index entries of finished jobs a held xmin keeps; a NULL floor is
# the range's start); the outer LIMIT stops the loop (and the locking) once it has its rows, so
# a batch of urgent jobs never reads the less urgent ones, and the statement is planned once
# for every priority. The CTE (run once: it locks) keeps each row's available_at from before
# the lease: when the job became due.
# The update finds the locked rows by ctid (a TID scan, one heap fetch each), not by id: a join
# on id is planned from the row estimate, and an analyze that finds almost no live rows among
# the tuples a held xmin keeps makes one primary-key lookup look dearer than a scan of the whole
# table, which the join then ran once per claimed row. A row a concurrent commit moved to a
# newer version after the statement's snapshot is left ready for the next claim.


def floor_params(floors: Mapping[int, datetime | None]) -> dict[str, datetime | None]:
    """The claim's floor parameters, one a priority (None: from the start of its range of the
    index). Scalars, not one array: psycopg dumps an array element by element in Python."""
    return {f"floor_{p}": floors.get(p) for p in PRIORITIES}


# Each priority with its floor, most urgent first: the rows the lateral subqueries run for.
BY_PRIORITY = "(VALUES {}) AS p(priority, floor)".format(
    ", ".join(f"({p}, CAST(%(floor_{p})s AS timestamptz))" for p in PRIORITIES)
)
# One priority's due rows from its floor, in due order, along ix_jobs_claim.
DUE_IN_PRIORITY = """status = 'ready' AND queue = %(queue)s AND priority = p.priority
            AND available_at <= now() AND available_at >= COALESCE(p.floor, '-infinity')"""

# What a claim sets on each row it leases (`CLAIM`, and the capped claims' statements).
LEASE = """attempts = attempts + 1, receipt = gen_random_uuid(),
    available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s,
    started_at = now()"""

CLAIM = f"""
WITH due AS (
    SELECT d.ctid, d.available_at FROM {BY_PRIORITY}
    CROSS JOIN LATERAL (
        SELECT ctid, available_at FROM jobs WHERE {DUE_IN_PRIORITY}
        ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED) AS d
    LIMIT %(limit)s)
UPDATE jobs SET {LEASE}
FROM due WHERE jobs.ctid = due.ctid
RETURNING jobs.id, jobs.body, jobs.attempts, jobs.receipt::text AS receipt,
    due.available_at AS due_at, jobs.priority, jobs.snoozes
"""

# While job types are paused (`held`, never empty) the claim passes their rows by: the same walk
# along ix_jobs_claim, filtering. Nothing paused, the claim above runs unchanged.
_NOT_PAUSED = "AND type <> ALL(CAST(%(held)s AS text[]))\n    ORDER BY available_at LIMIT"
CLAIM_SKIPPING_HELD = CLAIM.replace("ORDER BY available_at LIMIT", _NOT_PAUSED)

# The earliest due time, each priority's first row along ix_jobs_claim from its floor: ordered,
# so the claim connection's enable_sort=off keeps it on the index whatever the row estimate. A
# min() over the whole queue could be planned as a bitmap scan reading every entry past the
# floor (every lease's included).
NEXT_VISIBLE = f"""
SELECT EXTRACT(EPOCH FROM min(first.available_at) - now())::float8 AS seconds
FROM {BY_PRIORITY}
CROSS JOIN LATERAL (
    SELECT available_at FROM jobs
    WHERE status = 'ready' AND queue = %(queue)s AND priority = p.priority
        AND available_at >= COALESCE(p.floor, '-infinity')
    ORDER BY available_at LIMIT 1) AS first
"""

NEXT_VISIBLE_SKIPPING_HELD = NEXT_VISIBLE.replace("ORDER BY available_at LIMIT", _NOT_PAUSED)

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
# The ids once more as `= ANY`: an index condition on jobs whichever side of the join the
# planner puts it, so a row estimate of about one (an analyze under a held xmin horizon) cannot
# make it walk the whole primary key (with every finished job's dead entry) for ten rows.
_HELD = "jobs.id = l.id AND jobs.receipt = l.receipt AND jobs.id = ANY(CAST(%(ids)b AS text[]))"

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


# With history (job_history, `history_sql.py` reads it), each settle also keeps the job's
# timeline in the same statement: a retry appends the attempt that ended to the row's
# attempt_log ({start, end, worker, error}; the claim set started_at), and a finished job's row
# is written to job_history from what the DELETE or UPDATE returned, its last attempt in
# columns. The statements without history above stay as they were.
_SETTLED = (
    "jobs.id, jobs.type, jobs.queue, jobs.body, jobs.created_at, jobs.attempts, jobs.attempt_log"
)
_RAN = "COALESCE(jobs.started_at, now()) AS started_at, CAST(%(worker)s AS text) AS worker"

ACK_KEEPING = f"""
WITH settled AS (
    DELETE FROM jobs USING unnest({_LEASES}) AS l(id, receipt) WHERE {_HELD}
    RETURNING {_SETTLED}, {_RAN}, CAST(NULL AS text) AS error),
{keep_finished("'done'", DOC)}
{COUNT_DONE}"""

# The error goes in as '' for none: a binary array of only NULLs has no type to send.
RETRY_KEEPING = f"""
WITH moved AS (
    UPDATE jobs SET available_at = now() + l.delay, receipt = NULL, lease_expires_at = NULL,
        attempts = jobs.attempts - l.snooze, snoozes = jobs.snoozes + l.snooze,
        attempt_log = COALESCE(jobs.attempt_log, '[]') || {attempt_entry("NULLIF(l.error, '')")}
    FROM unnest(
        {_LEASES}, CAST(%(delays)b AS interval[]), CAST(%(snoozes)b AS int[]),
        CAST(%(errors)b AS text[])) AS l(id, receipt, delay, snooze, error)
    WHERE {_HELD}
    RETURNING 1)
SELECT pg_notify(%(channel)s, '') WHERE EXISTS (SELECT 1 FROM moved)
"""


def _dead_letter_keeping(doc: str) -> str:
    return f"""
WITH settled AS (
    UPDATE jobs SET status = 'dead', last_error = l.reason, dead_at = now(), receipt = NULL,
        lease_expires_at = NULL, unique_key = NULL
    FROM unnest({_LEASES}, CAST(%(reasons)b AS text[])) AS l(id, receipt, reason)
    WHERE {_HELD}
    RETURNING {_SETTLED}, {_RAN}, jobs.last_error AS error),
{keep_finished("'dead'", doc)}
{COUNT_FAILED}"""


DEAD_LETTER_KEEPING = _dead_letter_keeping(DOC)
BURY_UNREADABLE_KEEPING = _dead_letter_keeping(SAFE_DOC)

# A cancelled job did not run since its last retry: no last attempt, its error the last one's.
CANCEL_KEEPING = f"""
WITH settled AS (
    DELETE FROM jobs WHERE id = %(id)s AND queue = %(queue)s AND status = 'ready'
        AND (receipt IS NULL OR lease_expires_at <= now())
    RETURNING {_SETTLED}, CAST(NULL AS timestamptz) AS started_at, CAST(NULL AS text) AS worker,
        jobs.attempt_log -> -1 ->> 'error' AS error),
{keep_finished("'cancelled'", SAFE_DOC)}
SELECT 1 FROM settled
"""

# A job id already stored, or a unique key a live job holds, is skipped (ON CONFLICT without a
# target covers the primary key and uq_jobs_unique_key). The queues that got a job are returned:
# the caller wakes them after the commit (`notifier.py`), not with a NOTIFY in this statement.
# A job is due at its not_before time, else its delay from now (the database's clock). The arrays
# go in binary (%(name)b): psycopg's text format escapes every element through a regex, which
# costs more than the insert itself on a large batch.
ENQUEUE = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at, priority)
    SELECT id, type, body, queue, unique_key, COALESCE(not_before, now() + delay), priority
    FROM unnest(CAST(%(ids)b AS text[]), CAST(%(types)b AS text[]), CAST(%(bodies)b AS text[]),
        CAST(%(queues)b AS text[]), CAST(%(keys)b AS text[]),
        CAST(%(not_befores)b AS timestamptz[]), CAST(%(delays)b AS interval[]),
        CAST(%(priorities)b AS smallint[]))
        AS row(id, type, body, queue, unique_key, not_before, delay, priority)
    ON CONFLICT DO NOTHING RETURNING queue)
SELECT count(*) AS added, COALESCE(array_agg(DISTINCT queue), '{}') AS queues FROM added
"""

# In the business transaction, without NOTIFY: a transaction that notifies takes a
# database-wide lock at commit. The unit of work wakes the queue once it has committed.
OUTBOX_ADD = """
INSERT INTO jobs (id, type, body, queue, unique_key, available_at, priority)
VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
    COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s), %(priority)s)
ON CONFLICT DO NOTHING RETURNING 1
"""

# `enqueue_in_transaction`'s: the NOTIFY rides in the caller's transaction, which PostgreSQL
# sends at its commit and drops on a rollback.
OUTBOX_ADD_NOTIFY = """
WITH added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at, priority)
    VALUES (%(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
        COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s), %(priority)s)
    ON CONFLICT DO NOTHING RETURNING 1)
SELECT pg_notify(%(channel)s, '') FROM added
"""
