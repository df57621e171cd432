"""An SQS backend's outbox relayed in the background, as the worker process does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.relay import OutboxRelay


@asynccontextmanager
async def relay_running(backend: Backend) -> AsyncIterator[None]:
    """Relay `backend`'s committed outbox rows to SQS until the block ends. Stopped between
    batches, never cancelled inside one: a claim cut off mid-way would leave its pooled
    connection checked out."""
    assert backend.outbox is not None
    relay = OutboxRelay(storage=backend.outbox, sink=backend.sink)
    stop = anyio.Event()

    async def relay_until_stopped() -> None:
        while not stop.is_set():
            if not await relay.relay_once():
                await anyio.sleep(0.05)

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay_until_stopped)
        yield
        stop.set()
