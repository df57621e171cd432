"""The SQS backend's job ledger: each job's row in the jobs table from the outbox until it ends.

SQS can neither keep a key unique, nor remove a message it has not handed out, nor delay one
past 15 minutes; the row does all three. See `skincare_sqs.ledger` for the port and its rules.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

import psycopg
from psycopg.rows import TupleRow, class_row, dict_row, tuple_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.history import worker_name
from skincare_core.jobs.job import Message
from skincare_core.jobs.outcomes import RECENT, OutcomeCounts
from skincare_core.jobs.steering import JobState
from skincare_postgres.driver import in_transaction
from skincare_postgres.jobs import ledger_sql as sql
from skincare_postgres.jobs.history import PostgresJobHistory
from skincare_postgres.jobs.ledger_caps import CappedStart, start_capped
from skincare_postgres.jobs.outbox_storage import PostgresOutboxStorage
from skincare_postgres.jobs.outcomes import PRUNE_PARAMS, read_recent
from skincare_postgres.jobs.outcomes_sql import COUNT_FINISHED, PRUNE

_SWEEP_EVERY = 600.0


class LedgerRow(NamedTuple):
    """A live job's ledger row: its `state` as an operator sees it (`JobState`), its body only
    while it waits unsent ('' once sent)."""

    id: str
    type: str
    body: str
    queue: str
    attempts: int
    due_at: datetime
    state: JobState


class PostgresJobLedger(PostgresOutboxStorage):
    """The outbox storage of the SQS relay, and the ledger `SqsQueue` keeps its jobs in.

    The relay's claims also sweep, every ten minutes, the rows of jobs SQS can no longer hold
    (sent more than 14 days ago, its longest retention): a job lost that way frees its key; and
    the finished-jobs counts older than an hour.

    With `history` it keeps each job's timeline (`ledger_sql`'s `*_KEEPING` statements), naming
    `worker` (this process's `host:pid` if None) for the attempts it ends, and `history` reads
    it (None without).
    """

    _swept_at: float | None = None

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        lease: timedelta = timedelta(seconds=30),
        window: timedelta = timedelta(0),
        history: bool = True,
        worker: str | None = None,
    ) -> None:
        super().__init__(engine, lease=lease, window=window)
        self._engine = engine
        self._keeping = history
        self._worker = worker_name() if worker is None else worker
        self.history = PostgresJobHistory(engine, live=sql.LEDGER_LIVE_ROWS) if history else None

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """These jobs reached the queue (their rows keep the bodies with history)."""
        if self._keeping:
            await self._autocommit.run(sql.MARK_SENT_KEEPING, {"receipts": list(handles)})
        else:
            await super().mark_sent(handles)

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` rows due within the window; sweep now and then."""
        if self._swept_at is None or time.monotonic() - self._swept_at > _SWEEP_EVERY:
            self._swept_at = time.monotonic()
            await self._autocommit.run(sql.SWEEP, {})
            await self._autocommit.run(PRUNE, PRUNE_PARAMS)
        return await super().claim(limit)

    async def add(self, envelope: Envelope, *, due: datetime | None, send_now: bool) -> str | None:
        """Store the job's row unless a live job holds its key (None). With `send_now` the row
        is leased to the caller, who sends it and passes the returned receipt to `mark_sent`
        (or `forget`); otherwise the relay sends it when it is due."""
        params = {
            "id": envelope.job.id,
            "type": envelope.job.type,
            "body": envelope.body,
            "queue": envelope.queue,
            "key": envelope.unique_key,
            "not_before": due,
            "claim": send_now,
            "lease": self._lease,
        }
        rows = await self._autocommit.rows(sql.ADD, params, dict_row)
        return str(rows[0]["receipt"]) if rows else None

    async def forget(self, receipt: str) -> None:
        """The caller could not send the job it added: it was never enqueued."""
        await self._autocommit.run(sql.FORGET, {"receipt": receipt})

    async def start(self, job_ids: Sequence[str]) -> set[str]:
        """Received jobs are running; returns those that were cancelled (ack them unrun)."""
        if not job_ids:
            return set()
        statement = sql.START_KEEPING if self._keeping else sql.START
        rows = await self._autocommit.rows(statement, {"ids": list(job_ids)}, tuple_row)
        return {str(row[0]) for row in rows}

    async def start_capped(
        self,
        jobs: Sequence[tuple[str, str]],
        *,
        queue: str,
        caps: ConcurrencyCaps,
        lease: timedelta,
    ) -> CappedStart:
        """Received (id, type) jobs of `queue` run while every cap each falls under has room,
        every process's running jobs counted, each slot leased for `lease`; the others are
        held back (their rows stay sent). Tombstones are reported cancelled (ack them unrun).
        One transaction (`ledger_caps`)."""
        if not jobs:
            return CappedStart(frozenset(), frozenset())

        async def work(conn: psycopg.AsyncConnection[TupleRow]) -> CappedStart:
            return await start_capped(conn, jobs, queue=queue, caps=caps, lease=lease)

        return await in_transaction(self._engine, work)

    async def extend_caps(self, job_ids: Sequence[str], lease: timedelta) -> None:
        """These capped running jobs keep their slots for `lease` from now."""
        if job_ids:
            await self._autocommit.run(sql.EXTEND_CAPPED, {"ids": list(job_ids), "lease": lease})

    async def retry(self, job_id: str, *, error: str | None = None) -> None:
        """A received job goes back to waiting in SQS (a retry), its attempt failed with
        `error`."""
        if self._keeping:
            params = {"id": job_id, "error": error, "worker": self._worker}
            await self._autocommit.run(sql.RETRY_KEEPING, params)
        else:
            await self._autocommit.run(sql.RETRY, {"id": job_id})

    async def finish(
        self, ended: Sequence[Message], *, queue: str, reasons: Sequence[str] | None = None
    ) -> None:
        """These jobs of `queue` were acked (or, with their `reasons`, went dead): their rows,
        and keys, go and they are counted done (or failed), in one statement."""
        if not ended:
            return
        failed = reasons is not None
        done, dead = (0, len(ended)) if failed else (len(ended), 0)
        params = {"ids": [m.job.id for m in ended], "queue": queue, "done": done, "failed": dead}
        if not self._keeping:
            await self._autocommit.run(sql.FINISH, params)
            return
        params |= {
            "attempts": [m.attempts for m in ended],
            "errors": list(reasons) if reasons is not None else [""] * len(ended),
            "worker": self._worker,
        }
        await self._autocommit.run(sql.FINISH_KEEPING, params)

    async def count_dead(self, queue: str, count: int) -> None:
        """`count` messages of `queue` that had no row (bodies that were no job) went dead:
        counted failed."""
        params = {"queue": queue, "done": 0, "failed": count}
        await self._autocommit.run(COUNT_FINISHED, params)

    async def recent(self, window: timedelta = RECENT) -> Mapping[str, OutcomeCounts]:
        """Per named queue, the jobs finished in the minutes that started within `window`."""
        return await read_recent(self._autocommit, window)

    async def cancel(self, job_id: str, queue: str) -> bool:
        """Remove an unsent job, or leave a tombstone for a sent one that is not running;
        whether the job was cancelled."""
        statement = sql.CANCEL_KEEPING if self._keeping else sql.CANCEL
        rows = await self._autocommit.rows(statement, {"id": job_id, "queue": queue}, tuple_row)
        return bool(rows)

    async def resent(self, jobs: Sequence[tuple[str, str, str]]) -> None:
        """These (id, type, queue) jobs were sent back from the dead letters, without keys."""
        if jobs:
            ids, types, queues = (list(column) for column in zip(*jobs, strict=True))
            params = {"ids": ids, "types": types, "queues": queues}
            await self._autocommit.run(sql.RESENT, params)

    async def find(self, job_id: str) -> LedgerRow | None:
        """The live job's row; None when there is none (ended, cancelled, never there)."""
        rows = await self._autocommit.rows(sql.FIND, {"id": job_id}, class_row(LedgerRow))
        return rows[0] if rows else None

    async def run_now(self, job_id: str) -> bool:
        """Make an unsent job due later due now; whether it was one."""
        return bool(await self._autocommit.rows(sql.RUN_NOW, {"id": job_id}, tuple_row))

    async def park(self, jobs: Sequence[tuple[str, str]]) -> set[str]:
        """These received (id, body) jobs wait in the outbox again until their pause ends;
        returns the ids that did (those with a row)."""
        if not jobs:
            return set()
        ids, bodies = (list(column) for column in zip(*jobs, strict=True))
        params = {"ids": ids, "bodies": bodies}
        rows = await self._autocommit.rows(sql.PARK, params, tuple_row)
        return {str(row[0]) for row in rows}
