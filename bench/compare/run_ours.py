"""Ours: skincare_postgres.PostgresQueue driven by skincare_core's Worker, no-op handler."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import anyio
from attrs import frozen
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.compare.server import sqlalchemy_url
from bench.compare.systems import Handler, Payload
from skincare_core.jobs import Definitions, Envelope, Job, JobDefinition, Router, Worker, new_job
from skincare_postgres import JOBS_CHANNEL, PostgresPauses, PostgresQueue, create_engine, upgrade

JOB_TYPE = "noop"


@frozen
class Noop:
    """The typed variant's arguments: the job's number, an int on the wire."""

    n: int


async def _unserved(args: Noop) -> None:
    raise NotImplementedError("the enqueue side's definition has no handler")


# What the enqueue side uses to build typed jobs (the worker's definition has the handler).
NOOP = JobDefinition(JOB_TYPE, Noop, _unserved)
# No enqueue ever notifies this channel: a worker listening on it only polls (notify off).
SILENT_CHANNEL = "bench_nobody_notifies"


class OursSystem:
    """PostgresQueue.enqueue_many (one INSERT per batch) and a Worker on its own queue."""

    def __init__(self, url: str, engine: AsyncEngine, options: Mapping[str, Any]) -> None:
        self._url = url
        self._engine = engine
        self._options = options
        self._queue = PostgresQueue(engine, visibility_timeout=timedelta(seconds=30))

    async def install(self) -> None:
        """The shipped Alembic migrations (synchronous: run in a worker thread); with option
        history_indexes=False, job_history without its indexes after them."""
        await anyio.to_thread.run_sync(upgrade, sqlalchemy_url(self._url))
        if not self._options.get("history_indexes", True):
            await self._drop_history_indexes()

    async def _drop_history_indexes(self) -> None:
        # The least a kept history costs: each finished job's row, found by no search.
        async with self._engine.begin() as conn:
            found = await conn.execute(
                text("SELECT indexname FROM pg_indexes WHERE tablename = 'job_history'")
            )
            for name in found.scalars().all():
                await conn.execute(text(f'DROP INDEX "{name}"'))

    async def enqueue(self, payloads: Sequence[Payload]) -> None:
        """One statement (and NOTIFY) for the batch; typed jobs with option typed=True."""
        if self._options.get("typed"):
            envelopes = [NOOP.job(Noop(n=int(p["n"]))) for p in payloads]
        else:
            envelopes = [Envelope(new_job(JOB_TYPE, **p)) for p in payloads]
        await self._queue.enqueue_many(envelopes)

    @asynccontextmanager
    async def work(self, handler: Handler, *, batch: int, concurrency: int) -> AsyncIterator[None]:
        """A Worker with receive_batch=batch; option notify=False makes it poll only, option
        typed=True serves a typed definition (each payload structured into `Noop`)."""
        router = Router()

        async def noop(job: Job) -> None:
            await handler(job.payload)

        async def typed_noop(args: Noop) -> None:
            await handler({"n": args.n})

        typed = bool(self._options.get("typed"))
        if not typed:
            router.register(JOB_TYPE, noop)
        definitions = Definitions(JobDefinition(JOB_TYPE, Noop, typed_noop)) if typed else None
        async with self._worker_queue() as queue, anyio.create_task_group() as tg:
            worker = Worker(
                queue=queue,
                router=None if typed else router,
                definitions=definitions,
                concurrency=concurrency,
                receive_batch=batch,
                shutdown_grace=timedelta(seconds=5),
            )
            tg.start_soon(worker.run)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def remaining(self) -> int:
        """Rows left in the jobs table that are not dead (acked jobs are deleted)."""
        async with self._engine.connect() as conn:
            result = await conn.execute(text("SELECT count(*) FROM jobs WHERE status <> 'dead'"))
            return int(result.scalar_one())

    @asynccontextmanager
    async def _worker_queue(self) -> AsyncIterator[PostgresQueue]:
        poll = timedelta(seconds=float(self._options.get("poll_s", 1.0)))
        notify = bool(self._options.get("notify", True))
        queue = PostgresQueue(
            self._engine,
            visibility_timeout=timedelta(seconds=30),
            poll_interval=poll,
            channel=JOBS_CHANNEL if notify else SILENT_CHANNEL,
            # As the worker runs it: watching the pauses (read every half second).
            pauses=PostgresPauses(self._engine),
            history=bool(self._options.get("history", True)),
        )
        async with queue:
            yield queue

    async def aclose(self) -> None:
        """Close the enqueueing queue's connections."""
        await self._queue.aclose()


@asynccontextmanager
async def open_system(url: str, options: Mapping[str, Any]) -> AsyncIterator[OursSystem]:
    """Ours on `url`. Options: notify (default True), poll_s (default 1.0), typed (default
    False: a plain handler), history (default True: finished jobs kept in job_history),
    history_indexes (default True; False: job_history's indexes dropped after the migrations)."""
    engine = create_engine(sqlalchemy_url(url))
    system = OursSystem(url, engine, options)
    try:
        yield system
    finally:
        await system.aclose()
        await engine.dispose()
