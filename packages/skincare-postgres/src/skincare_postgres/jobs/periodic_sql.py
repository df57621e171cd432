"""Statements of the schedule store and the rate limiter, with psycopg `%(name)s` placeholders."""

from __future__ import annotations

# The rule follows the code that runs it; the last tick is kept.
SCHEDULE_BEGIN = """
INSERT INTO job_schedules (name, cron, timezone, job_type, last_tick)
VALUES (%(name)s, %(cron)s, %(timezone)s, %(job_type)s, %(tick)s)
ON CONFLICT (name) DO UPDATE SET cron = EXCLUDED.cron, timezone = EXCLUDED.timezone,
    job_type = EXCLUDED.job_type
"""

# The row lock makes concurrent claims of one tick queue up; each re-reads last_tick, so only
# the first moves it and inserts the job, in the same statement (one commit for both).
SCHEDULE_CLAIM = """
WITH claimed AS (
    INSERT INTO job_schedules AS s (name, cron, timezone, job_type, last_tick)
    VALUES (%(name)s, '', '', %(type)s, %(tick)s)
    ON CONFLICT (name) DO UPDATE SET last_tick = EXCLUDED.last_tick
    WHERE s.last_tick < EXCLUDED.last_tick
    RETURNING 1),
added AS (
    INSERT INTO jobs (id, type, body, queue, unique_key, available_at)
    SELECT %(id)s, %(type)s, %(body)s, %(queue)s, %(key)s, now() FROM claimed
    ON CONFLICT DO NOTHING RETURNING queue),
woken AS (SELECT pg_notify(%(channel)s || '.' || queue, '') FROM added)
SELECT (SELECT count(*) FROM claimed) AS claimed, (SELECT count(*) FROM woken) AS woken
"""

SCHEDULE_RECORDS = (
    "SELECT name, cron, timezone, job_type, last_tick FROM job_schedules ORDER BY name"
)

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
