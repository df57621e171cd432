"""The statements of the SQS backend's outbox and job ledger on the jobs table (`job_ledger.py`).

A row is `ready` while it waits in the outbox (leased by `receipt` while a relay or an enqueue
sends it), then `sent`, `running` (received) or `cancelled` (a tombstone) until the job is
acked or dead, when it is deleted. The unique index covers ready, sent and running rows.

With history (`*_KEEPING`) a row keeps its job's body once sent (a search reads its arguments),
the start of its running attempt (`started_at`) and its failed attempts (`attempt_log`), and a
job's end writes its history row (job_history) in the statement that deletes its row.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from skincare_postgres.jobs.history_sql import SAFE_DOC, LiveRows, attempt_entry, keep_finished
from skincare_postgres.jobs.outcomes_sql import COUNT_FINISHED


class OutboxClaimed(NamedTuple):
    """A row `CLAIM` returns: the job, where and when it goes, and the sender's lease."""

    id: str
    body: str
    queue: str
    unique_key: str | None
    due: datetime
    receipt: str


# Rows due within `window` (SQS delays a message by at most 15 minutes) whose lease is free; the
# due time stays as it was, so a release or an expired lease keeps the job's schedule. A job of
# a paused queue or type stays here until it is resumed (job_pauses: a few rows at most).
CLAIM = """
UPDATE jobs SET attempts = attempts + 1, receipt = gen_random_uuid(),
    lease_expires_at = now() + %(lease)s
WHERE id = ANY(ARRAY(
    SELECT id FROM jobs WHERE status = 'ready' AND available_at <= now() + %(window)s
        AND (lease_expires_at IS NULL OR lease_expires_at <= now())
        AND NOT EXISTS (SELECT 1 FROM job_pauses p
            WHERE (p.kind = 'queue' AND p.name = jobs.queue)
                OR (p.kind = 'type' AND p.name = jobs.type))
    ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED))
RETURNING id, body, queue, unique_key, available_at AS due, receipt::text AS receipt
"""

# A row cancelled while it was being sent stays a tombstone for the message that was sent.
MARK_SENT = """
UPDATE jobs SET status = CASE WHEN status = 'ready' THEN 'sent' ELSE status END, body = '',
    receipt = NULL, lease_expires_at = NULL
WHERE receipt = ANY(%(receipts)s::uuid[])
"""

# A send that failed: a tombstone without a message goes, the rest are claimable at once.
RELEASE = """
WITH gone AS (
    DELETE FROM jobs WHERE receipt = ANY(%(receipts)s::uuid[]) AND status = 'cancelled')
UPDATE jobs SET receipt = NULL, lease_expires_at = NULL
WHERE receipt = ANY(%(receipts)s::uuid[]) AND status = 'ready'
"""

FORGET = "DELETE FROM jobs WHERE receipt = %(receipt)s::uuid"

# `claim`: the enqueue sends the job itself, now; otherwise the relay sends it when it is due.
ADD = """
INSERT INTO jobs (id, type, body, queue, unique_key, available_at, receipt, lease_expires_at)
SELECT %(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
    COALESCE(CAST(%(not_before)s AS timestamptz), now()), lease.receipt,
    CASE WHEN lease.receipt IS NULL THEN NULL ELSE now() + %(lease)s END
FROM (SELECT CASE WHEN %(claim)s THEN gen_random_uuid() END AS receipt) lease
ON CONFLICT DO NOTHING
RETURNING COALESCE(receipt::text, '') AS receipt
"""

# Received jobs: tombstones are deleted and reported (their jobs are acked unrun); the rest run.
# A row an enqueue is still marking sent counts as sent. A copy of a job whose row says it is not
# in SQS (`STRAY`: dead, or waiting in the outbox, unleased: parked by a pause, or released after
# a send that failed as far as its sender knew) is a stray delivery: reported and acked unrun too.
STRAY = "status = 'dead' OR (status = 'ready' AND receipt IS NULL)"
START = f"""
WITH cancelled AS (
    DELETE FROM jobs WHERE id = ANY(%(ids)s) AND status = 'cancelled' RETURNING id),
started AS (
    UPDATE jobs SET status = 'running'
    WHERE id = ANY(%(ids)s) AND (status = 'sent' OR (status = 'ready' AND receipt IS NOT NULL))
    RETURNING 1)
SELECT id FROM cancelled
UNION ALL SELECT id FROM jobs WHERE id = ANY(%(ids)s) AND ({STRAY})
"""

RETRY = "UPDATE jobs SET status = 'sent' WHERE id = %(id)s AND status = 'running'"

# The jobs ended: rows go and the batch is counted (done or failed) in the same statement.
FINISH = f"""
WITH gone AS (DELETE FROM jobs WHERE id = ANY(%(ids)s) AND status <> 'dead')
{COUNT_FINISHED}"""

# An unsent row is deleted; a sent one (or one being sent) becomes a tombstone without its key.
CANCEL = """
WITH unsent AS (
    DELETE FROM jobs WHERE id = %(id)s AND queue = %(queue)s AND status = 'ready'
        AND (lease_expires_at IS NULL OR lease_expires_at <= now())
    RETURNING 1),
sent AS (
    UPDATE jobs SET status = 'cancelled', unique_key = NULL
    WHERE id = %(id)s AND queue = %(queue)s
        AND (status = 'sent' OR (status = 'ready' AND lease_expires_at > now()))
    RETURNING 1)
SELECT 1 FROM unsent UNION ALL SELECT 1 FROM sent
"""

# Dead jobs sent back from a dead-letter queue: in SQS again, holding no key.
RESENT = """
INSERT INTO jobs (id, type, body, queue, status)
SELECT id, type, '', queue, 'sent'
FROM unnest(CAST(%(ids)s AS text[]), CAST(%(types)s AS text[]), CAST(%(queues)s AS text[]))
    AS row(id, type, queue)
ON CONFLICT (id) DO UPDATE SET status = 'sent', unique_key = NULL, queue = EXCLUDED.queue,
    receipt = NULL, lease_expires_at = NULL
"""

BURY_UNREADABLE = """
UPDATE jobs SET status = 'dead', last_error = %(reason)s, dead_at = now(), receipt = NULL,
    unique_key = NULL
WHERE id = %(id)s
"""

# SQS keeps a message at most 14 days after it was sent (a row's due time, give or take the
# 15 minutes of DelaySeconds): a ledger row older than that has no message left to settle it.
SWEEP = """
DELETE FROM jobs WHERE status IN ('sent', 'running', 'cancelled')
    AND available_at < now() - interval '14 days 1 hour'
"""

# A job as the ledger holds it: an unsent row (`ready`) is scheduled, or waits for the relay, or
# is being sent (leased); a sent one is in SQS. A tombstone is no job any more.
FIND = """
SELECT id, type, body, queue, attempts, available_at AS due_at,
    CASE
        WHEN status = 'running' THEN 'running'
        WHEN status = 'sent' THEN 'queued'
        WHEN lease_expires_at > now() THEN 'queued'
        WHEN available_at > now() THEN 'scheduled'
        ELSE 'ready'
    END AS state
FROM jobs WHERE id = %(id)s AND status IN ('ready', 'sent', 'running')
"""

# An unsent job due later (not being sent) is due now: the relay sends it on its next claim.
RUN_NOW = """
UPDATE jobs SET available_at = now()
WHERE id = %(id)s AND status = 'ready' AND available_at > now()
    AND (lease_expires_at IS NULL OR lease_expires_at <= now())
RETURNING 1
"""

# Received jobs of a paused queue or type go back to waiting in the outbox, bodies restored, due
# now: the relay sends them again once they are resumed (their messages are then deleted).
PARK = """
UPDATE jobs SET status = 'ready', body = p.body, available_at = now(), receipt = NULL,
    lease_expires_at = NULL
FROM unnest(CAST(%(ids)s AS text[]), CAST(%(bodies)s AS text[])) AS p(id, body)
WHERE jobs.id = p.id AND jobs.status IN ('sent', 'running')
    AND jobs.id = ANY(CAST(%(ids)s AS text[]))
RETURNING jobs.id
"""
# With history: a sent row keeps its body; a received one notes when its attempt started.
MARK_SENT_KEEPING = """
UPDATE jobs SET status = CASE WHEN status = 'ready' THEN 'sent' ELSE status END,
    receipt = NULL, lease_expires_at = NULL
WHERE receipt = ANY(%(receipts)s::uuid[])
"""

START_KEEPING = f"""
WITH cancelled AS (
    DELETE FROM jobs WHERE id = ANY(%(ids)s) AND status = 'cancelled' RETURNING id),
started AS (
    UPDATE jobs SET status = 'running', started_at = now()
    WHERE id = ANY(%(ids)s) AND (status = 'sent' OR (status = 'ready' AND receipt IS NOT NULL))
    RETURNING 1)
SELECT id FROM cancelled
UNION ALL SELECT id FROM jobs WHERE id = ANY(%(ids)s) AND ({STRAY})
"""

RETRY_KEEPING = f"""
UPDATE jobs SET status = 'sent',
    attempt_log = COALESCE(jobs.attempt_log, '[]') || {attempt_entry("CAST(%(error)s AS text)")}
WHERE id = %(id)s AND status = 'running'
"""

# Deliveries (SQS's receive count) and the dead jobs' reasons come from the worker; an ack's
# error goes in as ''. The ids again as `= ANY`, as in `queue_sql._HELD`: an index condition
# whatever the row estimate.
FINISH_KEEPING = f"""
WITH settled AS (
    DELETE FROM jobs USING unnest(CAST(%(ids)s AS text[]), CAST(%(attempts)s AS int[]),
        CAST(%(errors)s AS text[])) AS l(id, attempts, error)
    WHERE jobs.id = l.id AND jobs.status <> 'dead' AND jobs.id = ANY(CAST(%(ids)s AS text[]))
    RETURNING jobs.id, jobs.type, jobs.queue, jobs.body, jobs.created_at, l.attempts,
        jobs.attempt_log, COALESCE(jobs.started_at, now()) AS started_at,
        CAST(%(worker)s AS text) AS worker, NULLIF(l.error, '') AS error),
{keep_finished("CASE WHEN CAST(%(failed)s AS int) > 0 THEN 'dead' ELSE 'done' END", SAFE_DOC)}
{COUNT_FINISHED}"""

_CANCELLED = """jobs.id, jobs.type, jobs.queue, jobs.body, jobs.created_at,
        jsonb_array_length(COALESCE(jobs.attempt_log, '[]')) AS attempts, jobs.attempt_log,
        CAST(NULL AS timestamptz) AS started_at, CAST(NULL AS text) AS worker,
        jobs.attempt_log -> -1 ->> 'error' AS error"""

# The history has the job cancelled at once, whether its row goes or stays a tombstone.
CANCEL_KEEPING = f"""
WITH unsent AS (
    DELETE FROM jobs WHERE id = %(id)s AND queue = %(queue)s AND status = 'ready'
        AND (lease_expires_at IS NULL OR lease_expires_at <= now())
    RETURNING {_CANCELLED}),
sent AS (
    UPDATE jobs SET status = 'cancelled', unique_key = NULL
    WHERE id = %(id)s AND queue = %(queue)s
        AND (status = 'sent' OR (status = 'ready' AND lease_expires_at > now()))
    RETURNING {_CANCELLED}),
settled AS (SELECT * FROM unsent UNION ALL SELECT * FROM sent),
{keep_finished("'cancelled'", SAFE_DOC)}
SELECT 1 FROM settled
"""

# The ledger's live jobs: waiting in the outbox (`ready`), in SQS (`sent`: retrying once an
# attempt failed) or received (`running`). Deliveries are the failed attempts and the running one.
LEDGER_LIVE_ROWS = LiveRows(
    where="status IN ('ready', 'sent', 'running')",
    state="""CASE WHEN status = 'running' THEN 'running'
        WHEN attempt_log IS NOT NULL THEN 'retrying'
        WHEN available_at > now() THEN 'scheduled' ELSE 'enqueued' END""",
    doc="CASE WHEN pg_input_is_valid(body, 'jsonb') THEN CAST(body AS jsonb) END",
    attempts="""jsonb_array_length(COALESCE(attempt_log, '[]'))
        + CASE WHEN status = 'running' THEN 1 ELSE 0 END""",
    # A retry's delay is SQS's (a message's visibility): the ledger knows only the first due.
    due="CASE WHEN attempt_log IS NULL THEN available_at END",
)

# Concurrency caps on SQS (`ledger_caps.py`): a received job takes a slot of each cap it falls
# under as a `job_cap_leases` row naming the receipt its ledger row got when it started. The
# slot counts while the row runs (`running`) with that receipt, its lease unexpired: an ack or
# a dead letter deletes the row, a retry, snooze or park moves it out of `running`, and a
# crashed worker's lease expires; the next capped start deletes the slots that no longer count.
#
# Run after the caps' advisory locks (`capped_claims.LOCK`, a statement of its own: this one's
# snapshot then holds every start committed before), in one round trip: the received tombstones
# go (acked unrun, they take no slot); the received jobs that run already under a live lease are
# `busy` (SQS delivered them twice: the copy waits, held back); each cap's running jobs are
# counted (`running`, cap -> count) and the slots that no longer count are deleted.
CAP_ROOM = """
WITH cancelled AS (
    DELETE FROM jobs WHERE id = ANY(%(ids)s) AND status = 'cancelled' RETURNING id),
live AS (
    SELECT c.cap, c.job_id FROM job_cap_leases c
    JOIN jobs j ON j.id = c.job_id AND j.receipt = c.receipt AND j.status = 'running'
        AND j.lease_expires_at > now()
    WHERE c.cap = ANY(CAST(%(caps)s AS text[]))),
gone AS (
    DELETE FROM job_cap_leases c WHERE c.cap = ANY(CAST(%(caps)s AS text[]))
        AND NOT EXISTS (SELECT 1 FROM live WHERE live.cap = c.cap AND live.job_id = c.job_id))
SELECT ARRAY(SELECT id FROM cancelled) AS cancelled,
    ARRAY(SELECT id FROM jobs WHERE id = ANY(%(ids)s) AND status = 'running'
        AND lease_expires_at > now()) AS busy,
    ARRAY(SELECT cap FROM live) AS running
"""

# The jobs the caps have room for run, each under a fresh receipt leased for `lease` (a row
# running under an expired lease is a crashed worker's job, delivered again: it starts again),
# and each cap's slot names that receipt. A job with no row (a message sent around the ledger,
# or a late copy of a job that ended) gets one, so that it counts too; its end deletes it. A
# row in no state to start (cancelled since, dead, or back in the outbox) is left as it is and
# its id not returned: that delivery is a stray copy, acked unrun.
START_CAPPED = """
WITH started AS (
    INSERT INTO jobs AS j (id, type, body, queue, status, receipt, lease_expires_at, started_at)
    SELECT s.id, s.type, '', %(queue)s, 'running', gen_random_uuid(), now() + %(lease)s, now()
    FROM unnest(CAST(%(ids)s AS text[]), CAST(%(types)s AS text[])) AS s(id, type)
    ON CONFLICT (id) DO UPDATE SET status = 'running', started_at = now(),
        receipt = EXCLUDED.receipt, lease_expires_at = EXCLUDED.lease_expires_at
    WHERE j.status IN ('sent', 'running') OR (j.status = 'ready' AND j.receipt IS NOT NULL)
    RETURNING j.id, j.receipt),
slots AS (
    INSERT INTO job_cap_leases (cap, job_id, receipt)
    SELECT l.cap, started.id, started.receipt FROM started
    JOIN unnest(CAST(%(lease_caps)s AS text[]), CAST(%(lease_ids)s AS text[])) AS l(cap, id)
        ON l.id = started.id
    ON CONFLICT (cap, job_id) DO UPDATE SET receipt = EXCLUDED.receipt)
SELECT id FROM started
"""

# The worker's heartbeat: its capped jobs keep their slots for another `lease`.
EXTEND_CAPPED = """
UPDATE jobs SET lease_expires_at = now() + %(lease)s
WHERE id = ANY(%(ids)s) AND status = 'running' AND receipt IS NOT NULL
"""
