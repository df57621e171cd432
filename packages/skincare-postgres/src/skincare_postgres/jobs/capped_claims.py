"""Claims under concurrency caps: at most N jobs of a type, a queue or a key run at once, every
worker process counted.

A claim of a queue that caps may touch runs as one transaction on the queue's claim connection:

1. it takes a transaction-scoped advisory lock per cap it may meet, in one sorted order, so the
   claims that could start jobs under one cap take turns (and never deadlock);
2. it counts each cap's running jobs: the rows of `job_cap_leases` whose job still holds the
   lease it was claimed with, unexpired. A statement after the lock sees every claim committed
   before it. Rows that no longer count (acked, retried, dead, expired: a crashed worker's) are
   deleted as it goes, so the settle statements never write here;
3. it reads the due rows in priority and due order, leaving out the job types a full cap holds
   back, and takes as many as each cap has room for;
4. it leases them and records their caps' rows, in one statement.

A job held back is not leased: it spends no attempt, and the next claim after a slot frees
takes it. Only queues that caps may touch pay for this; every other claim is `queue_sql.CLAIM`.

A queue without a cap of its own pays for it only while jobs of a capped type are due in it:
its claim first leases what is due as `queue_sql.CLAIM` does, passing the rows of capped types
by (`PASSING_CAPPED`), and takes the transaction above only if it passed one, for the rest of
its batch. After a transaction that met a due job of a capped type, or a full cap (whose due
jobs it cannot see), the next claim starts with one, until a transaction meets neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

import psycopg
from attrs import frozen
from psycopg.rows import TupleRow, class_row, dict_row, tuple_row

from skincare_core.jobs.caps import CapRoom, ConcurrencyCaps
from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.execution import fetch
from skincare_postgres.jobs import queue_sql as sql

LOCK = """
SELECT pg_advisory_xact_lock(hashtextextended('skincare.cap:' || cap, 0))
FROM unnest(CAST(%(caps)s AS text[])) AS cap
"""

RUNNING = """
WITH live AS (
    SELECT c.cap, c.job_id FROM job_cap_leases c
    JOIN jobs j ON j.id = c.job_id AND j.receipt = c.receipt AND j.lease_expires_at > now()
    WHERE c.cap = ANY(CAST(%(caps)s AS text[]))),
gone AS (
    DELETE FROM job_cap_leases c WHERE c.cap = ANY(CAST(%(caps)s AS text[]))
        AND NOT EXISTS (SELECT 1 FROM live WHERE live.cap = c.cap AND live.job_id = c.job_id))
SELECT cap, count(*)::int AS running FROM live GROUP BY cap
"""


# The due rows as `queue_sql.CLAIM` reads them (each priority from its floor, most urgent
# first), locked, without the types a full cap holds back.
CANDIDATES = f"""
SELECT d.* FROM {sql.BY_PRIORITY}
CROSS JOIN LATERAL (
    SELECT ctid::text AS ctid, available_at, priority, type FROM jobs
    WHERE {sql.DUE_IN_PRIORITY} AND type <> ALL(CAST(%(held_back)s AS text[]))
    ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED) AS d
LIMIT %(limit)s
"""

TAKE = f"""
WITH due AS (
    SELECT CAST(d.ctid AS tid) AS ctid, d.available_at
    FROM unnest(CAST(%(ctids)s AS text[]), CAST(%(dues)s AS timestamptz[]))
        AS d(ctid, available_at)),
taken AS (
    UPDATE jobs SET {sql.LEASE}
    FROM due WHERE jobs.ctid = due.ctid
    RETURNING jobs.id, jobs.body, jobs.attempts, jobs.receipt, due.available_at AS due_at,
        jobs.priority, jobs.snoozes, due.ctid AS claimed_ctid),
counted AS (
    INSERT INTO job_cap_leases (cap, job_id, receipt)
    SELECT l.cap, taken.id, taken.receipt FROM taken
    JOIN unnest(CAST(%(lease_caps)s AS text[]), CAST(%(lease_ctids)s AS text[])) AS l(cap, ctid)
        ON CAST(l.ctid AS tid) = taken.claimed_ctid
    ON CONFLICT (cap, job_id) DO UPDATE SET receipt = EXCLUDED.receipt)
SELECT id, body, attempts, receipt::text AS receipt, due_at, priority, snoozes FROM taken
"""


# The due rows as `queue_sql.CLAIM` reads them (the paused types left out), locked; the rows of
# a type outside the caps leased as `queue_sql.CLAIM` leases them, with `passed` false; then one
# row with `passed` true (and nothing else) if a row of a capped type was passed by.
PASSING_CAPPED = f"""
WITH due AS (
    SELECT d.ctid, d.available_at, d.type FROM {sql.BY_PRIORITY}
    CROSS JOIN LATERAL (
        SELECT ctid, available_at, type FROM jobs
        WHERE {sql.DUE_IN_PRIORITY} AND type <> ALL(CAST(%(paused)s AS text[]))
        ORDER BY available_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED) AS d
    LIMIT %(limit)s),
taken AS (
    UPDATE jobs SET {sql.LEASE}
    FROM due WHERE jobs.ctid = due.ctid AND due.type <> ALL(CAST(%(capped)s AS text[]))
    RETURNING jobs.id, jobs.body, jobs.attempts, jobs.receipt::text AS receipt,
        due.available_at AS due_at, jobs.priority, jobs.snoozes)
SELECT id, body, attempts, receipt, due_at, priority, snoozes, false AS passed FROM taken
UNION ALL
(SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, true FROM due
    WHERE due.type = ANY(CAST(%(capped)s AS text[])) LIMIT 1)
"""


class Candidate(NamedTuple):
    """A due row `CANDIDATES` locked: where it is, when it became due, its priority and type."""

    ctid: str
    available_at: datetime
    priority: int
    type: str


@frozen
class CappedClaim:
    """What a capped claim leased; the (priority, due time) of the rows it read in order, for
    the claim floors (none when it left types out); whether a cap held a job back; whether it
    met a due job of a capped type (held back or not)."""

    rows: Sequence[sql.Claimed]
    seen: Sequence[tuple[int, datetime]]
    held_back: bool
    met_capped: bool = True


class CappedClaims:
    """The claims of one named queue under `caps`, on the queue's claim connection."""

    def __init__(
        self,
        connection: DedicatedConnection,
        *,
        queue: str,
        caps: ConcurrencyCaps,
        visibility: timedelta,
    ) -> None:
        self._connection = connection
        self._queue = queue
        self._caps = caps
        self._locked = list(caps.relevant_to(queue))
        self._visibility = visibility
        self._capped_types = list(caps.capped_types)
        # Every job of a capped queue falls under its cap: each claim is a capped one.
        self._queue_capped = self._capped_first = queue in caps.queues

    async def claim(
        self, limit: int, floors: Mapping[int, datetime | None], *, paused: Sequence[str] = ()
    ) -> CappedClaim:
        """Lease up to `limit` due jobs, as many as the caps have room for, none of a
        `paused` type."""
        passed: list[sql.Claimed] = []
        if not self._capped_first:
            passed, met_capped = await self._passing_capped(limit, floors, paused)
            if not met_capped:
                seen = [(r.priority, r.due_at) for r in passed]
                return CappedClaim(passed, seen, held_back=False, met_capped=False)
        # A failure from here leaves the rows leased above to come back when their leases end,
        # as a claim whose reply is lost does. They do not move the floors: capped rows due
        # before them wait.
        capped = await self._capped(limit - len(passed), floors, paused)
        self._capped_first = self._queue_capped or capped.met_capped
        return CappedClaim([*passed, *capped.rows], capped.seen, held_back=capped.held_back)

    async def _passing_capped(
        self, limit: int, floors: Mapping[int, datetime | None], paused: Sequence[str]
    ) -> tuple[list[sql.Claimed], bool]:
        """The due jobs of types outside the caps, leased; whether a capped one was passed by."""
        params = {"queue": self._queue, "limit": limit, "visibility": self._visibility}
        params |= {"paused": list(paused), "capped": self._capped_types}
        params |= sql.floor_params(floors)
        rows = await self._connection.rows(PASSING_CAPPED, params, tuple_row)
        leased = [sql.Claimed(*row[:7]) for row in rows if not row[7]]
        return leased, len(leased) < len(rows)

    async def _capped(
        self, limit: int, floors: Mapping[int, datetime | None], paused: Sequence[str]
    ) -> CappedClaim:
        async def work(conn: psycopg.AsyncConnection[TupleRow]) -> CappedClaim:
            return await self._claim(conn, limit, floors, paused)

        return await self._connection.transaction(work)

    async def _claim(
        self,
        conn: psycopg.AsyncConnection[TupleRow],
        limit: int,
        floors: Mapping[int, datetime | None],
        paused: Sequence[str],
    ) -> CappedClaim:
        caps = {"caps": self._locked}
        await fetch(conn, LOCK, caps, tuple_row)
        counted = await fetch(conn, RUNNING, caps, dict_row)
        room = CapRoom(self._caps, {row["cap"]: row["running"] for row in counted})
        if room.queue_full(self._queue):
            return CappedClaim([], [], held_back=True)
        full = room.full_types()
        held_back = [*full, *paused]
        # Rows of a type left out may lie below what this claim returns: no floor follows it.
        params = {"queue": self._queue, "limit": limit, "held_back": held_back}
        params |= sql.floor_params({} if held_back else floors)
        candidates = await fetch(conn, CANDIDATES, params, class_row(Candidate))
        chosen = [c for c in candidates if room.take(self._queue, c.type)]
        seen = [] if held_back else [(c.priority, c.available_at) for c in candidates]
        rows = await self._take(conn, chosen) if chosen else []
        stopped = room.held_back or bool(full)
        met = stopped or any(c.type in self._capped_types for c in candidates)
        return CappedClaim(rows, seen, held_back=stopped, met_capped=met)

    async def _take(
        self, conn: psycopg.AsyncConnection[TupleRow], chosen: Sequence[Candidate]
    ) -> list[sql.Claimed]:
        leases = [(cap, c.ctid) for c in chosen for cap in self._caps.caps_of(self._queue, c.type)]
        params = {
            "ctids": [c.ctid for c in chosen],
            "dues": [c.available_at for c in chosen],
            "visibility": self._visibility,
            "lease_caps": [cap for cap, _ in leases],
            "lease_ctids": [ctid for _, ctid in leases],
        }
        return await fetch(conn, TAKE, params, class_row(sql.Claimed))
