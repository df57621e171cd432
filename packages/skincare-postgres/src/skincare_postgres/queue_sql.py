"""The statements of the Postgres queue's hot path (psycopg placeholders)."""

from __future__ import annotations

# One statement claims a batch: SKIP LOCKED lets claimers pass each other; the lease pushes
# available_at forward, so the partial index ix_jobs_claim also finds expired leases.
CLAIM = """
UPDATE jobs SET attempts = attempts + 1, receipt = gen_random_uuid(),
    available_at = now() + %(visibility)s, lease_expires_at = now() + %(visibility)s
WHERE id = ANY(ARRAY(
    SELECT id FROM jobs WHERE status = 'ready' AND available_at <= now()
    ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED))
RETURNING id, body, attempts, receipt::text
"""

NEXT_VISIBLE = """
SELECT EXTRACT(EPOCH FROM min(available_at) - now())::float8 FROM jobs WHERE status = 'ready'
"""

# Receipts are fresh UUIDs per lease: a row whose current receipt is listed was leased by it.
ACK = "DELETE FROM jobs WHERE id = ANY(%(ids)s) AND receipt = ANY(%(receipts)s::uuid[])"

MARK_SENT = "DELETE FROM jobs WHERE receipt = ANY(%(receipts)s::uuid[])"

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
