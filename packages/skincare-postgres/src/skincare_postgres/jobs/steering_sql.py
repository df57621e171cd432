"""The statements of the pauses and of the actions on one job (`steering.py`), with psycopg
`%(name)s` placeholders; each runs on a pooled autocommit connection."""

from __future__ import annotations

PAUSE = """
INSERT INTO job_pauses (kind, name) VALUES (%(kind)s, %(name)s)
ON CONFLICT (kind, name) DO NOTHING RETURNING 1
"""

RESUME = "DELETE FROM job_pauses WHERE kind = %(kind)s AND name = %(name)s RETURNING 1"

PAUSED = "SELECT kind, name FROM job_pauses"

# A row of the Postgres queue as an operator sees it. A live lease (receipt, not expired) is
# running; a ready row due later is scheduled if it never ran, retrying if it did.
FIND = """
SELECT id, body, queue, attempts, available_at AS due_at,
    CASE
        WHEN status = 'dead' THEN 'dead'
        WHEN receipt IS NOT NULL AND lease_expires_at > now() THEN 'running'
        WHEN available_at <= now() THEN 'ready'
        WHEN attempts > 0 THEN 'retrying'
        ELSE 'scheduled'
    END AS state
FROM jobs WHERE id = %(id)s
"""

# A scheduled or retrying row (no live lease, due later) is due now; its queue's idle workers
# are woken (an operator's action is rare: the NOTIFY's commit cost does not matter here).
RUN_NOW = """
WITH moved AS (
    UPDATE jobs SET available_at = now()
    WHERE id = %(id)s AND status = 'ready' AND available_at > now() AND receipt IS NULL
    RETURNING queue)
SELECT pg_notify(%(channel)s || '.' || queue, '') FROM moved
"""
