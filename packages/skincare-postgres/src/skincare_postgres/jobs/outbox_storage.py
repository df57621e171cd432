"""The committed outbox rows a relay forwards when another queue (SQS) is the real one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from psycopg.rows import class_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import InvalidJob
from skincare_postgres.driver import Autocommit
from skincare_postgres.jobs import ledger_sql as sql
from skincare_postgres.jobs.row_bodies import decode_row_body

_CLAIMED = class_row(sql.OutboxClaimed)


class PostgresOutboxStorage:
    """OutboxStorage over the jobs table: rows of every named queue due within `window`, with
    their due time as `not_before`, leased for `lease` while the relay sends them, kept as the
    job's ledger row once sent (`PostgresJobLedger`), released at once when the send failed. A
    body that does not decode, or names another job than its row, is buried.

    `window` is how far ahead the queue can delay a message itself (SQS: 15 minutes); a job due
    later waits here until it is that close.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        lease: timedelta = timedelta(seconds=30),
        window: timedelta = timedelta(0),
    ) -> None:
        self._autocommit = Autocommit(engine)
        self._lease = lease
        self._window = window

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` rows due within the window as (receipt, envelope)."""
        params = {"lease": self._lease, "window": self._window, "limit": limit}
        claimed = []
        for row in await self._autocommit.rows(sql.CLAIM, params, _CLAIMED):
            try:
                job = decode_row_body(row.id, row.body)
            except InvalidJob as error:
                await self._autocommit.run(
                    sql.BURY_UNREADABLE, {"id": row.id, "reason": str(error)}
                )
                continue
            claimed.append((row.receipt, Envelope(job, row.queue, row.due, row.unique_key)))
        return claimed

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """The relay sent these jobs on: their rows stay, `sent`, until the jobs end."""
        if handles:
            await self._autocommit.run(sql.MARK_SENT, {"receipts": list(handles)})

    async def release(self, handles: Sequence[str]) -> None:
        """The relay could not send these jobs: claimable again at once, still due when they
        were."""
        if handles:
            await self._autocommit.run(sql.RELEASE, {"receipts": list(handles)})
