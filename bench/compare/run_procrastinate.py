"""procrastinate with its psycopg 3 connector; it fetches one job per query (no batch)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import procrastinate

from bench.compare.systems import Handler, Payload, Received

QUEUE = "bench"


async def _unset(payload: Received) -> None:
    raise RuntimeError("no worker is running")


class ProcrastinateSystem:
    """procrastinate's batch_defer (one INSERT) and its worker; `batch` has no meaning here."""

    def __init__(self, app: procrastinate.App, options: Mapping[str, Any]) -> None:
        self._app = app
        self._handler: Handler = _unset
        self._listen_notify = bool(options.get("notify", True))

        @app.task(name="noop", queue=QUEUE)
        async def noop(**payload: str) -> None:
            await self._handler(payload)

        self._task = noop

    async def install(self) -> None:
        """procrastinate's schema (tables, functions, triggers)."""
        await self._app.schema_manager.apply_schema_async()

    async def enqueue(self, payloads: Sequence[Payload]) -> None:
        """batch_defer_async: one statement for the whole batch."""
        jobs: list[dict[str, Any]] = [dict(p) for p in payloads]
        await self._task.batch_defer_async(*jobs)

    @asynccontextmanager
    async def work(self, handler: Handler, *, batch: int, concurrency: int) -> AsyncIterator[None]:
        """run_worker_async at `concurrency`, deleting jobs that succeed (as the others do)."""
        self._handler = handler
        task = asyncio.create_task(
            self._app.run_worker_async(
                queues=[QUEUE],
                concurrency=concurrency,
                wait=True,
                install_signal_handlers=False,
                delete_jobs="successful",
                listen_notify=self._listen_notify,
            )
        )
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self._handler = _unset

    async def remaining(self) -> int:
        """Jobs still to do or being done."""
        rows = await self._app.connector.execute_query_all_async(
            "SELECT count(*) AS n FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
        )
        return int(rows[0]["n"])


@asynccontextmanager
async def open_system(url: str, options: Mapping[str, Any]) -> AsyncIterator[ProcrastinateSystem]:
    """procrastinate on `url`; option `notify` (default True) is its listen_notify."""
    connector = procrastinate.PsycopgConnector(conninfo=url)
    app = procrastinate.App(connector=connector)
    system = ProcrastinateSystem(app, options)
    async with app.open_async():
        yield system
