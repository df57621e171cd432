"""The shop's named queues on moto's SQS, and the SQS backend on them as the processes build it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from skincare_core.jobs.backend import Backend
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_postgres import PostgresJobLedger, create_engine
from skincare_services.backends import redrive_receive_count
from skincare_sqs import MAX_DELAY, QueueUrls, ensure_queues, sqs_backend


def shop_queues(client: Any, prefix: str, **options: int) -> dict[str, QueueUrls]:
    """An SQS queue and DLQ for each of the shop's named queues, under `prefix`, with the
    maxReceiveCount `skincare dev` gives them unless `options` say otherwise."""
    options = {"max_receive_count": redrive_receive_count(5), **options}
    return ensure_queues(client, prefix, SHOP_ROUTES.names, **options)


def sqs_env(prefix: str) -> dict[str, str]:
    """The settings that point the processes at the queues of `shop_queues`."""
    return {"SKINCARE_QUEUE": "sqs", "SKINCARE_SQS_QUEUE_PREFIX": prefix}


@asynccontextmanager
async def shop_sqs_backend(
    client: Any, urls: dict[str, QueueUrls], database_url: str
) -> AsyncIterator[Backend]:
    """The SQS backend on `urls` with its ledger in the database at `database_url`."""
    engine = create_engine(database_url)
    try:
        ledger = PostgresJobLedger(engine, window=MAX_DELAY)
        async with sqs_backend(
            client,
            urls=urls,
            ledger=ledger,
            queues=urls,
            wait_time_seconds=1,
            history=ledger.history,
        ) as backend:
            yield backend
    finally:
        await engine.dispose()
