"""PostgresQueue: the jobs table as a leased queue, its dead letters, and the outbox storage."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any

import anyio
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job, encode_job
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, Message
from skincare_postgres import queue_sql as q
from skincare_postgres.acks import AckBatcher
from skincare_postgres.connection import DedicatedConnection
from skincare_postgres.dead_letters import PostgresDeadLetters
from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.errors import unavailable_as_error
from skincare_postgres.listener import JobListener
from skincare_postgres.schema import JOBS_CHANNEL

_ENQUEUE = text(
    "WITH added AS (INSERT INTO jobs (id, type, body) "
    "SELECT * FROM unnest(CAST(:ids AS text[]), CAST(:types AS text[]), CAST(:bodies AS text[])) "
    "ON CONFLICT (id) DO NOTHING RETURNING 1) "
    "SELECT pg_notify(:channel, '') FROM (SELECT 1 FROM added LIMIT 1) AS any_added"
)
# Lease bookkeeping may lose its last instant on a server crash: the job then runs again,
# which at-least-once delivery allows. Enqueues stay fully durable (they use the engine).
# psycopg prepares a statement on its 5th run and the server may then keep a generic plan made
# while the table was tiny (a seq scan + sort): once a backlog grows, every claim scanned the
# whole table (135 ms at 200,000 rows) and the soak collapsed. Planning each run costs ~0.1 ms.
_HOT_PATH_SETTINGS = {"synchronous_commit": "off", "plan_cache_mode": "force_custom_plan"}


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
        with unavailable_as_error():
            async with self._engine.connect() as conn:
                await conn.execute(_ENQUEUE, params)

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
        await self._settle(q.NACK, message, delay=delay, channel=self._channel)

    async def extend(self, message: Message, visibility: timedelta) -> None:
        """Keep the lease for `visibility` more if the receipt is live."""
        await self._settle(q.EXTEND, message, visibility=visibility)

    async def dead_letter(self, message: Message, reason: str) -> None:
        """Move the job to the dead letters with `reason` if the receipt is live."""
        await self._settle(q.DEAD_LETTER, message, reason=reason)

    async def claim(self, limit: int) -> Sequence[tuple[str, Job]]:
        """OutboxStorage: lease up to `limit` jobs for the relay as (receipt, job)."""
        return [(m.receipt, m.job) for m in await self._claim(limit)]

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """OutboxStorage: the relay sent these jobs on; delete them."""
        if handles:
            await self._settles.fetch(q.MARK_SENT, {"receipts": list(handles)})

    async def _claim(self, limit: int) -> list[Message]:
        params = {"visibility": self._visibility, "limit": limit}
        rows = await self._claims.fetch(q.CLAIM, params)
        messages = []
        for job_id, body, attempts, receipt in rows:
            try:
                messages.append(Message(receipt, decode_job(body), attempts))
            except InvalidJob as error:
                await self._settles.fetch(q.BURY_UNREADABLE, {"id": job_id, "reason": str(error)})
        return messages

    async def _until_next_visible(self) -> float:
        [(seconds,)] = await self._claims.fetch(q.NEXT_VISIBLE, {})
        # A visible row we could not claim is being leased by someone else right now.
        return self._poll if seconds is None else max(float(seconds), 0.005)

    async def _delete(self, items: Sequence[tuple[str, str]]) -> None:
        params = {"ids": [i for i, _ in items], "receipts": [r for _, r in items]}
        await self._settles.fetch(q.ACK, params)

    async def _settle(self, statement: str, message: Message, **params: Any) -> None:
        await self._settles.fetch(
            statement, {"id": message.job.id, "receipt": message.receipt, **params}
        )


def _millis(duration: timedelta) -> str:
    return str(max(1, int(duration.total_seconds() * 1000)))
