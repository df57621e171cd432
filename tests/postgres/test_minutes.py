"""The per-minute counts of job types in job_minutes: added up per queue, type and minute, each
histogram bucket by bucket, and read back for the last hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.minutes import MinuteRecorder
from skincare_postgres import PostgresMinuteStore

pytestmark = pytest.mark.anyio


async def test_counts_add_up_per_minute_and_read_back(engine: AsyncEngine) -> None:
    now = datetime.now(UTC)
    recorder = MinuteRecorder(clock=lambda: now)
    store = PostgresMinuteStore(engine)
    for _ in range(2):
        recorder.started("default", "send_email", 0.004)
        recorder.finished("default", "send_email", "done", 0.015)
        recorder.finished("bulk", "render_invoice", "dead_lettered", 3.0)
        await store.add(recorder.take())
    rows = {row.job_type: row for row in await store.since(now - timedelta(hours=1))}
    email, pdf = rows["send_email"], rows["render_invoice"]
    assert (email.done, email.failed, sum(email.durations), sum(email.pickups)) == (2, 0, 2, 2)
    assert (pdf.queue, pdf.failed, sum(pdf.durations)) == ("bulk", 2, 2)
    assert await store.since(now + timedelta(minutes=2)) == []
