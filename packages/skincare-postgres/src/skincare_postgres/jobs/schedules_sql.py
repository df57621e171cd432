"""Statements of the schedule store (`schedules.py`), with psycopg `%(name)s` placeholders."""

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
    SELECT %(id)s, %(type)s, %(body)s, %(queue)s, %(key)s,
        COALESCE(CAST(%(not_before)s AS timestamptz), now() + %(delay)s)
    FROM claimed
    ON CONFLICT DO NOTHING RETURNING queue),
woken AS (SELECT pg_notify(%(channel)s || '.' || queue, '') FROM added)
SELECT (SELECT count(*) FROM claimed) AS claimed, (SELECT count(*) FROM woken) AS woken
"""

SCHEDULE_RECORDS = (
    "SELECT name, cron, timezone, job_type, last_tick FROM job_schedules ORDER BY name"
)
