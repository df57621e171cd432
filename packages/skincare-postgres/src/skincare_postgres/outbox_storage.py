"""The committed outbox rows a relay forwards when another queue (SQS) is the real one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from psycopg.rows import class_row
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.codec import decode_job
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import InvalidJob
from skincare_postgres import jobs_sql as sql
from skincare_postgres.driver import Autocommit

_CLAIMED = class_row(sql.OutboxClaimed)


class PostgresOutboxStorage:
    """OutboxStorage over the jobs table: due rows of every named queue, leased for `lease`
    while the relay sends them, deleted once sent, released at once when the send failed. A
    body that does not decode is buried."""

    def __init__(self, engine: AsyncEngine, *, lease: timedelta = timedelta(seconds=30)) -> None:
        self._autocommit = Autocommit(engine)
        self._lease = lease

    async def claim(self, limit: int) -> Sequence[tuple[str, Envelope]]:
        """Lease up to `limit` due rows as (receipt, envelope)."""
        params = {"visibility": self._lease, "limit": limit}
        claimed = []
        for row in await self._autocommit.rows(sql.OUTBOX_CLAIM, params, _CLAIMED):
            try:
                job = decode_job(row.body)
            except InvalidJob as error:
                await self._autocommit.run(
                    sql.BURY_UNREADABLE, {"id": row.id, "reason": str(error)}
                )
                continue
            claimed.append((row.receipt, Envelope(job, row.queue, None, row.unique_key)))
        return claimed

    async def mark_sent(self, handles: Sequence[str]) -> None:
        """The relay sent these jobs on; delete them."""
        if handles:
            await self._autocommit.run(sql.MARK_SENT, {"receipts": list(handles)})

    async def release(self, handles: Sequence[str]) -> None:
        """The relay could not send these jobs: claimable again at once."""
        if handles:
            await self._autocommit.run(sql.RELEASE, {"receipts": list(handles)})
