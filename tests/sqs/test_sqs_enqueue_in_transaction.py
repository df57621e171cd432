"""On SQS, `enqueue_in_transaction` writes the outbox row in the caller's transaction: the
relay sends a committed job on, and finds nothing of a rolled-back one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import Backend, Envelope, OutboxRelay, new_job
from skincare_postgres import PostgresJobLedger, enqueue_in_transaction
from skincare_sqs import sqs_backend
from tests.postgres.test_enqueue_in_transaction import KINDS
from tests.sqs.conftest import ProvisionNamed

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def relayed_backend(
    sqs_client: Any, fresh_named_queues: ProvisionNamed, ledger: PostgresJobLedger
) -> AsyncIterator[tuple[Backend, OutboxRelay]]:
    """The SQS backend of the named queue `default` and a relay from its outbox."""
    urls = fresh_named_queues(["default"])
    async with sqs_backend(
        sqs_client, urls=urls, ledger=ledger, queues=["default"], wait_time_seconds=0
    ) as backend:
        assert backend.outbox is not None
        yield backend, OutboxRelay(storage=backend.outbox, sink=backend.sink)


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_the_relay_sends_a_committed_job_and_never_a_rolled_back_one(
    sqs_client: Any,
    fresh_named_queues: ProvisionNamed,
    ledger: PostgresJobLedger,
    engine: AsyncEngine,
    kind: str,
) -> None:
    kept, dropped = new_job("sync_warehouse_stock", product_id="42"), new_job("dropped")
    async with relayed_backend(sqs_client, fresh_named_queues, ledger) as (backend, relay):
        async with KINDS[kind](engine) as conn:
            assert await enqueue_in_transaction(conn, Envelope(dropped), notify=False)
            await conn.rollback()
        async with KINDS[kind](engine) as conn:
            assert await enqueue_in_transaction(conn, Envelope(kept), notify=False)
            assert await relay.relay_once() == 0  # not committed yet: invisible to the relay
            await conn.commit()
        assert await relay.relay_once() == 1
        [message] = await backend.queue("default").receive(10)
    assert message.job == kept
