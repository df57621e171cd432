"""The statements on job_outcomes: each settle adds to its queue's row of the current minute in
the statement that settles (a CTE's rows feed the upsert), never in a statement of its own.

`COUNT_DONE` and `COUNT_FAILED` end a statement whose CTE `settled` returns each settled job's
`queue`; `COUNT_FINISHED` takes the counts as parameters (the SQS ledger knows them).
"""

from __future__ import annotations

_MINUTE = "date_trunc('minute', now())"
# Each connection adds to a row of its own (one of 64) for the minute: workers acking at the same
# moment do not queue on one row's lock.
_SLOT = "mod(pg_backend_pid(), 64)"

COUNT_DONE = f"""
INSERT INTO job_outcomes AS o (queue, minute, slot, done)
SELECT queue, {_MINUTE}, {_SLOT}, count(*) FROM settled GROUP BY queue
ON CONFLICT (queue, minute, slot) DO UPDATE SET done = o.done + EXCLUDED.done
"""

COUNT_FAILED = f"""
INSERT INTO job_outcomes AS o (queue, minute, slot, failed)
SELECT queue, {_MINUTE}, {_SLOT}, count(*) FROM settled GROUP BY queue
ON CONFLICT (queue, minute, slot) DO UPDATE SET failed = o.failed + EXCLUDED.failed
"""

COUNT_FINISHED = f"""
INSERT INTO job_outcomes AS o (queue, minute, slot, done, failed)
VALUES (%(queue)s, {_MINUTE}, {_SLOT}, %(done)s, %(failed)s)
ON CONFLICT (queue, minute, slot)
    DO UPDATE SET done = o.done + EXCLUDED.done, failed = o.failed + EXCLUDED.failed
"""

# The minutes that started within the window: "the last 5 minutes" is the current minute and
# the four before it.
RECENT = """
SELECT queue, sum(done)::bigint AS done, sum(failed)::bigint AS failed FROM job_outcomes
WHERE minute > now() - %(window)s GROUP BY queue
"""

PRUNE = "DELETE FROM job_outcomes WHERE minute < now() - %(kept)s"
