"""The worker's composition on SQS keeps periodic schedules and rate limits in the ledger's
database: a schedule's tick reaches its SQS queue once, and a rate limit is shared."""

from __future__ import annotations

import time
import uuid
from typing import Any

import anyio
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import Schedules
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_postgres import PostgresNotifier
from skincare_services.backends import job_backend
from skincare_services.scheduling import scheduler_for, throttle_for
from skincare_services.settings import load_settings
from skincare_sqs import ensure_queues

pytestmark = pytest.mark.anyio


async def test_a_tick_reaches_sqs_once_and_the_rate_limit_holds(
    sqs_client: Any, database_url: str, engine: AsyncEngine
) -> None:
    prefix = f"sched-{uuid.uuid4().hex[:8]}"
    await anyio.to_thread.run_sync(lambda: ensure_queues(sqs_client, prefix, SHOP_ROUTES.names))
    settings = load_settings(
        {
            "SKINCARE_DATABASE_URL": database_url,
            "SKINCARE_WEBHOOK_SECRET": "whsec",
            "SKINCARE_JWT_SECRET": "jwtsec-long-enough-for-32-bytes-0123456789",
            "SKINCARE_QUEUE": "sqs",
            "SKINCARE_SQS_QUEUE_PREFIX": prefix,
            "SKINCARE_RATE_LIMITS": "default=3",
        }
    )
    schedules = Schedules()
    schedules.add("every-second", "* * * * * *", "report")
    notifier = PostgresNotifier(engine)
    async with job_backend(
        settings=settings, engine=engine, queues=["default"], notifier=notifier
    ) as backend:
        throttle = throttle_for(settings=settings, backend=backend, queue="default")
        assert throttle is not None
        assert await throttle.take(10) == 3
        scheduler = scheduler_for(backend, schedules)
        assert scheduler is not None
        assert backend.outbox is not None
        # Begun just after a second starts, both claims below fall in the second after: the
        # first finds its one tick, the second none (a later second would bring a new tick).
        await anyio.sleep(1.02 - time.time() % 1)
        await scheduler.begin()
        await anyio.sleep(1.1)
        assert await scheduler.run_due() == ["every-second"]
        assert await scheduler.run_due() == []
        await OutboxRelay(storage=backend.outbox, sink=backend.sink).relay_once()
        [message] = await backend.queue("default").receive(10)
        assert message.job.type == "report"
        assert await backend.queue("default").receive(10) == []
