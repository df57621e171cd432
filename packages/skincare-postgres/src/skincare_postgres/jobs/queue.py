"""PostgresQueue: one named queue of the jobs table, leased.

Claims and settles run on two psycopg connections of its own (tuned for the hot path, below);
enqueues (`sink.py`) and cancels borrow a connection from the engine's pool. The
statements are in `queue_sql.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from types import TracebackType

import anyio
from psycopg.rows import class_row, dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.history import worker_name
from skincare_core.jobs.job import Message
from skincare_core.jobs.ports import Burial, Retry
from skincare_core.jobs.routing import DEFAULT_QUEUE, check_queue_name
from skincare_core.jobs.steering import NOTHING_PAUSED, WATCH_EVERY, Paused, Pauses, PauseWatch
from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.driver import Autocommit
from skincare_postgres.engine import engine_timeouts, libpq_conninfo
from skincare_postgres.jobs import queue_sql as sql
from skincare_postgres.jobs.capped_claims import CappedClaims
from skincare_postgres.jobs.claim_batcher import ClaimBatcher
from skincare_postgres.jobs.claim_floor import SWEEP_EVERY, PriorityFloors
from skincare_postgres.jobs.listener import JobListener
from skincare_postgres.jobs.notifier import PostgresNotifier
from skincare_postgres.jobs.outcomes import PRUNE_PARAMS, PruneSchedule
from skincare_postgres.jobs.outcomes_sql import PRUNE
from skincare_postgres.jobs.row_bodies import decode_row_body
from skincare_postgres.jobs.sink import PostgresSink
from skincare_postgres.schema import JOBS_CHANNEL, queue_channel

# Lease bookkeeping may lose its last instant on a server crash: the job then runs again,
# which at-least-once delivery allows. Enqueues stay fully durable (pooled connections).
# A prepared statement may keep a generic plan made while the table is small (a seq scan and a
# sort), which scans the whole backlog once it grows: every claim is planned for its own run.
_HOT_PATH_SETTINGS = {"synchronous_commit": "off", "plan_cache_mode": "force_custom_plan"}
_CLAIMED = class_row(sql.Claimed)
# The claim must walk ix_jobs_claim in order. When the statistics lag a burst of enqueues, a
# LIMIT above the planner's estimate of ready rows makes it read and sort the whole backlog.
_CLAIM_SETTINGS = {"enable_sort": "off"}
# After a claim a cap held a job back, the next looks this soon: a slot may free any moment,
# in any process, and no notification says so.
_HELD_BACK_POLL = 0.01


class PostgresQueue:
    """The Queue `name` of the jobs table. Close it with aclose()."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        name: str = DEFAULT_QUEUE,
        visibility_timeout: timedelta = timedelta(seconds=30),
        poll_interval: timedelta = timedelta(seconds=1),
        channel: str = JOBS_CHANNEL,
        connect_timeout: timedelta | None = None,
        statement_timeout: timedelta | None = None,
        claim_sweep_every: timedelta = timedelta(seconds=SWEEP_EVERY),
        notifier: PostgresNotifier | None = None,
        caps: ConcurrencyCaps = NO_CAPS,
        pauses: Pauses | None = None,
        history: bool = True,
        worker: str | None = None,
    ) -> None:
        """`claim_sweep_every`: how often a claim reads the claim index from its start rather
        than from the floor (claim_floor.py); zero makes every claim do so. `notifier` wakes
        the workers of the jobs this queue enqueues, after the commit (None: one of its own).
        The timeouts of its own connections are the engine's (`engine_timeouts`) unless given.
        `caps` (every process's the same) hold back a job while a cap it falls under is full
        (capped_claims.py); a queue no cap may touch claims as if there were none. `pauses`
        (read at most every half second) stop its claims or skip paused types. With
        `history` each settle and cancel also keeps the job's timeline (job_history), naming
        `worker` (this process's `host:pid` if None) as the one that ran each attempt."""
        self._autocommit = Autocommit(engine)
        self.name = check_queue_name(name)
        self._sink = PostgresSink(engine, channel=channel, notifier=notifier)
        self._visibility = visibility_timeout
        self._poll = poll_interval.total_seconds()
        conninfo = libpq_conninfo(engine.url)
        connect_timeout, statement_timeout = engine_timeouts(
            engine, connect=connect_timeout, statement=statement_timeout
        )
        settings = {**_HOT_PATH_SETTINGS, "statement_timeout": _millis(statement_timeout)}
        deadline = statement_timeout + connect_timeout
        self._claims = DedicatedConnection(
            conninfo,
            connect_timeout=connect_timeout,
            settings={**settings, **_CLAIM_SETTINGS},
            deadline=deadline,
        )
        self._settles = DedicatedConnection(
            conninfo, connect_timeout=connect_timeout, settings=settings, deadline=deadline
        )
        self._own_channel = queue_channel(channel, name)
        self._listener = JobListener(conninfo, self._own_channel, connect_timeout=connect_timeout)
        self._batched_claims = ClaimBatcher(self._claim_rows)
        self._floor = PriorityFloors(sweep_every=claim_sweep_every.total_seconds())
        self._prune = PruneSchedule()
        self._capped = None
        if caps.relevant_to(self.name):
            self._capped = CappedClaims(
                self._claims, queue=self.name, caps=caps, visibility=visibility_timeout
            )
        self._held_back = False
        self._pauses = None if pauses is None else PauseWatch(pauses)
        self._paused = NOTHING_PAUSED
        self._history = history
        self._worker = worker_name() if worker is None else worker

    async def __aenter__(self) -> PostgresQueue:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the queue's own connections (the engine is the caller's)."""
        await self._listener.close()
        await self._claims.close()
        await self._settles.close()

    async def enqueue(self, envelope: Envelope) -> bool:
        """Add the envelope's job, due after its delay (by the database's clock) or at its
        `not_before`, and wake idle workers after the commit; False if the id is stored or a
        live job holds its unique key."""
        return await self._sink.enqueue_many([envelope]) == 1

    async def enqueue_many(self, envelopes: Sequence[Envelope]) -> int:
        """Every envelope to its own queue in one durable statement; how many were added."""
        return await self._sink.enqueue_many(envelopes)

    async def cancel(self, job_id: str) -> bool:
        """Delete the job if it waits in this queue, now or scheduled; whether it did.

        A running job (a live lease) is not interrupted: False, and it finishes or fails as it
        would have. An expired lease counts as waiting.
        """
        statement = sql.CANCEL_KEEPING if self._history else sql.CANCEL
        found = await self._autocommit.rows(statement, {"id": job_id, "queue": self.name}, dict_row)
        return bool(found)

    async def receive(self, max_messages: int = 1) -> list[Message]:
        """Lease up to `max_messages` jobs; idle, wait on NOTIFY up to the poll interval."""
        await self._listener.start()
        deadline = anyio.current_time() + self._poll
        while True:
            if await self._queue_paused():
                # Paused: no claim; the pause is looked at again as often as it is read.
                remaining = deadline - anyio.current_time()
                if remaining <= 0:
                    return []
                await anyio.sleep(min(remaining, WATCH_EVERY))
                continue
            messages = await self._claim(max_messages)
            remaining = deadline - anyio.current_time()
            if messages or remaining <= 0:
                return messages
            wait = await self._until_next_visible()
            if self._held_back:
                wait = max(wait, _HELD_BACK_POLL)
            await self._listener.wait(min(remaining, wait))

    async def ack_many(self, messages: Sequence[Message]) -> None:
        """Delete every job whose lease is still the receipt's, counted done, in one statement."""
        if messages:
            if self._history:
                await self._settles.run(sql.ACK_KEEPING, self._worked(_leases(messages)))
            else:
                await self._settles.run(sql.ACK, _leases(messages))
            await self._prune_now_and_then()

    async def retry_many(self, retries: Sequence[Retry]) -> None:
        """Make each job whose lease is still the receipt's visible after its delay, in one
        statement that wakes this queue's idle workers."""
        if retries:
            params = _leases([r.message for r in retries])
            params |= {
                "delays": [r.delay for r in retries],
                "snoozes": [int(r.snooze) for r in retries],
                "channel": self._own_channel,
            }
            if self._history:
                params["errors"] = [r.error or "" for r in retries]
                await self._settles.run(sql.RETRY_KEEPING, self._worked(params))
            else:
                await self._settles.run(sql.RETRY, params)

    async def dead_letter_many(self, burials: Sequence[Burial]) -> None:
        """Move each job whose lease is still the receipt's to the dead letters with its
        reason, counted failed, in one statement."""
        if burials:
            params = _leases([b.message for b in burials])
            params["reasons"] = [b.reason for b in burials]
            await self._dead_letter(params, sql.DEAD_LETTER_KEEPING)
            await self._prune_now_and_then()

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        """Keep each lease that is still the receipt's for `visibility` more, in one statement."""
        if messages:
            await self._settles.run(sql.EXTEND, {**_leases(messages), "visibility": visibility})

    async def _queue_paused(self) -> bool:
        """Whether this queue is paused now; the paused types are kept for the claim."""
        if self._pauses is None:
            return False
        paused = await self._pauses.current()
        if paused != self._paused:
            # A resumed type's rows may lie below the floor the claims skipped them to.
            if self._paused.types - paused.types:
                self._floor.failed()
            self._paused = paused
        return self.name in paused.queues

    async def _claim(self, limit: int) -> list[Message]:
        return await self._batched_claims.claim(limit)

    async def _claim_rows(self, limit: int) -> list[Message]:
        floors = self._floor.for_claim()
        held = _held(self._paused)
        try:
            if self._capped is None:
                params: dict[str, object] = {
                    "visibility": self._visibility,
                    "limit": limit,
                    "queue": self.name,
                    **sql.floor_params(floors),
                }
                statement = sql.CLAIM
                if held:
                    params["held"], statement = held, sql.CLAIM_SKIPPING_HELD
                rows = await self._claims.rows(statement, params, _CLAIMED)
                seen = [(row.priority, row.due_at) for row in rows]
            else:
                capped = await self._capped.claim(limit, floors, paused=held)
                rows, seen, self._held_back = list(capped.rows), list(capped.seen), capped.held_back
        except BaseException:
            self._floor.failed()
            raise
        self._floor.claimed(seen)
        return await self._deliverable(rows)

    async def _deliverable(self, rows: Sequence[sql.Claimed]) -> list[Message]:
        """The claimed rows as messages; a row whose body is not its own job is buried now."""
        messages, burials = [], []
        for row in rows:
            # The receipt names the row and its lease: settlements never trust the body's id.
            receipt = f"{row.receipt}{_RECEIPT_SEPARATOR}{row.id}"
            try:
                job = decode_row_body(row.id, row.body)
            except InvalidJob as error:
                burials.append((receipt, str(error)))
                continue
            # A first delivery became due when it was enqueued (or its delay ended).
            messages.append(
                Message(receipt, job, row.attempts, enqueued_at=row.due_at, snoozes=row.snoozes)
            )
        if burials:
            await self._bury_unreadable(burials)
        return messages

    async def _bury_unreadable(self, burials: Sequence[tuple[str, str]]) -> None:
        # Never delivered: a handler could not run it, and no settlement could find its row.
        params = _receipts([receipt for receipt, _ in burials])
        params["reasons"] = [reason for _, reason in burials]
        await self._dead_letter(params, sql.BURY_UNREADABLE_KEEPING)

    async def _dead_letter(self, params: dict[str, object], keeping: str) -> None:
        if self._history:
            await self._settles.run(keeping, self._worked(params))
        else:
            await self._settles.run(sql.DEAD_LETTER, params)

    def _worked(self, params: dict[str, object]) -> dict[str, object]:
        """`params` with the worker the history names for the attempts they settle."""
        return {**params, "worker": self._worker}

    async def _until_next_visible(self) -> float:
        params: dict[str, object] = {"queue": self.name, **sql.floor_params(self._floor.floors)}
        statement = sql.NEXT_VISIBLE
        if held := _held(self._paused):
            params["held"], statement = held, sql.NEXT_VISIBLE_SKIPPING_HELD
        [row] = await self._claims.rows(statement, params, dict_row)
        seconds = row["seconds"]
        # A visible row we could not claim is being leased by someone else right now.
        return self._poll if seconds is None else max(float(seconds), 0.005)

    async def _prune_now_and_then(self) -> None:
        if self._prune.due():
            await self._settles.run(PRUNE, PRUNE_PARAMS)


def _held(paused: Paused) -> list[str]:
    """The paused job types, sorted (one statement text and plan shape per set)."""
    return sorted(paused.types)


# A receipt is "<lease UUID>:<row id>": a UUID holds no colon, the row id may.
_RECEIPT_SEPARATOR = ":"


def _leases(messages: Sequence[Message]) -> dict[str, object]:
    return _receipts([m.receipt for m in messages])


def _receipts(receipts: Sequence[str]) -> dict[str, object]:
    """The statements' `ids` and `receipts` arrays: each receipt's row id and lease."""
    leases, ids = zip(*(r.partition(_RECEIPT_SEPARATOR)[::2] for r in receipts), strict=True)
    return {"ids": list(ids), "receipts": list(leases)}


def _millis(duration: timedelta) -> str:
    return str(max(1, int(duration.total_seconds() * 1000)))
