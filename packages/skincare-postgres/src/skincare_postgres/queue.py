"""PostgresQueue: the jobs table as a leased queue, its dead letters, and the outbox storage.

Claims and settles run on two psycopg connections of its own (tuned for the hot path, below);
enqueues and the dead letters borrow a connection from the engine's pool. The statements are
in `jobs_sql.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, LiteralString

import anyio
from psycopg.rows import class_row, dict_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_postgres import jobs_sql as sql
from skincare_postgres.acks import AckBatcher
from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.dead_letters import PostgresDeadLetters
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.listener import JobListener
from skincare_postgres.schema import JOBS_CHANNEL

# Lease bookkeeping may lose its last instant on a server crash: the job then runs again,
# which at-least-once delivery allows. Enqueues stay fully durable (pooled connections).
# psycopg prepares a statement on its 5th run and the server may then keep a generic plan made
# while the table was tiny (a seq scan + sort): once a backlog grows, every claim scanned the
# whole table (135 ms at 200,000 rows) and the soak collapsed. Planning each run costs ~0.1 ms.
_HOT_PATH_SETTINGS = {"synchronous_commit": "off", "plan_cache_mode": "force_custom_plan"}
_CLAIMED = class_row(sql.Claimed)


class PostgresQueue(PostgresDeadLetters):
    """Queue + DeadLetters + JobSink + OutboxStorage on the jobs table. Close it with aclose()."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        visibility_timeout: timedelta = timedelta(seconds=30),
        poll_interval: timedelta = timedelta(seconds=1),
        channel: str = JOBS_CHANNEL,
        connect_timeout: timedelta = timedelta(seconds=5),
        statement_timeout: timedelta = timedelta(seconds=30),
    ) -> None:
        super().__init__(engine, channel)
        self._visibility = visibility_timeout
        self._poll = poll_interval.total_seconds()
        conninfo = libpq_conninfo(engine.url)
        settings = {**_HOT_PATH_SETTINGS, "statement_timeout": _millis(statement_timeout)}
        self._claims = DedicatedConnection(
            conninfo, connect_timeout=connect_timeout, settings=settings
        )
        self._settles = DedicatedConnection(
            conninfo, connect_timeout=connect_timeout, settings=settings
        )
        self._listener = JobListener(conninfo, channel, connect_timeout=connect_timeout)
        self._acks = AckBatcher(self._delete)

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

    async def enqueue(self, job: Job) -> None:
        """Make the job available now and wake idle workers; JobTooLarge before any I/O."""
        await self.enqueue_many([job])

    async def enqueue_many(self, jobs: Sequence[Job]) -> None:
        """Enqueue every job in one durable statement; a job id already queued is skipped."""
        bodies = [encode_job(job) for job in jobs]
        if not jobs:
            return
        params = {
            "ids": [job.id for job in jobs],
            "types": [job.type for job in jobs],
            "bodies": bodies,
            "channel": self._channel,
        }
        await self._autocommit.run(sql.ENQUEUE, params)

    async def receive(self, max_messages: int = 1) -> list[Message]:
        """Lease up to `max_messages` jobs; idle, wait on NOTIFY up to the poll interval."""
        await self._listener.start()
        deadline = anyio.current_time() + self._poll
        while True:
            messages = await self._claim(max_messages)
            remaining = deadline - anyio.current_time()
            if messages or remaining <= 0:
                return messages
            await self._listener.wait(min(remaining, await self._until_next_visible()))

    async def ack(self, message: Message) -> None:
        """Delete the job if the receipt is live (batched with concurrent acks)."""
        await self._acks.ack(message.job.id, message.receipt)

    async def nack(self, message: Message, delay: timedelta) -> None:
        """Make the job visible after `delay` if the receipt is live."""
        await self._settle(sql.NACK, message, delay=delay, channel=self._channel)

    async def extend(self, message: Message, visibility: timedelta) -> None:
        """Keep the lease for `visibility` more if the receipt is live."""
        await self._settle(sql.EXTEND, message, visibility=visibility)

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Move the job to the dead letters with `reason` if the receipt is live."""
        await self._settle(sql.DEAD_LETTER, message, reason=reason)

    async def claim(self, limit: int) -> Sequence[tuple[str, Job]]:
        """OutboxStorage: lease up to `limit` jobs for the relay as (receipt, job)."""
        return [(m.receipt, m.job) for m in await self._claim(limit)]

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """OutboxStorage: the relay sent these jobs on; delete them."""
        if handles:
            await self._settles.run(sql.MARK_SENT, {"receipts": list(handles)})

    async def release(self, handles: Sequence[str]) -> None:
        """OutboxStorage: the relay could not send these jobs; claimable again at once."""
        if handles:
            await self._settles.run(sql.RELEASE, {"receipts": list(handles)})

    async def _claim(self, limit: int) -> list[Message]:
        params = {"visibility": self._visibility, "limit": limit}
        messages = []
        for row in await self._claims.rows(sql.CLAIM, params, _CLAIMED):
            try:
                job = decode_job(row.body)
            except InvalidJob as error:
                await self._settles.run(sql.BURY_UNREADABLE, {"id": row.id, "reason": str(error)})
                continue
            messages.append(Message(receipt=row.receipt, job=job, attempts=row.attempts))
        return messages

    async def _until_next_visible(self) -> float:
        [row] = await self._claims.rows(sql.NEXT_VISIBLE, {}, dict_row)
        seconds = row["seconds"]
        # A visible row we could not claim is being leased by someone else right now.
        return self._poll if seconds is None else max(float(seconds), 0.005)

    async def _delete(self, items: Sequence[tuple[str, str]]) -> None:
        params = {"ids": [i for i, _ in items], "receipts": [r for _, r in items]}
        await self._settles.run(sql.ACK, params)

    async def _settle(self, statement: LiteralString, message: Message, **params: Any) -> None:
        await self._settles.run(
            statement, {"id": message.job.id, "receipt": message.receipt, **params}
        )


def _millis(duration: timedelta) -> str:
    return str(max(1, int(duration.total_seconds() * 1000)))
