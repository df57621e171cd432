"""Statements of the rate limiter (`rate_limits.py`), with psycopg `%(name)s` placeholders."""

from __future__ import annotations

RATE_WINDOW_ADD = """
INSERT INTO job_rate_windows (key, window_start, used)
VALUES (%(key)s, date_trunc('second', clock_timestamp()), 0)
ON CONFLICT (key) DO NOTHING
"""

# The database's clock sets the window for every process; a window never moves back, so a
# statement that waited for the lock with an older clock reading cannot reopen a spent second.
RATE_ACQUIRE = """
WITH cur AS (
    SELECT w.key, GREATEST(w.window_start, date_trunc('second', clock_timestamp())) AS start,
        CASE WHEN w.window_start >= date_trunc('second', clock_timestamp())
            THEN w.used ELSE 0 END AS used
    FROM job_rate_windows w WHERE w.key = %(key)s FOR UPDATE),
grant_ AS (
    SELECT key, start, used, LEAST(%(wanted)s, GREATEST(%(limit)s - used, 0)) AS granted
    FROM cur)
UPDATE job_rate_windows w SET window_start = g.start, used = g.used + g.granted
FROM grant_ g WHERE w.key = g.key
RETURNING g.granted
"""
