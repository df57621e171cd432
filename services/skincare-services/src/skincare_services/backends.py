"""The configured database engine and job backend: Postgres, or SQS with its ledger in Postgres.

Used by the worker's composition root and by the CLI's commands; boto3 loads only with SQS.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_postgres import PostgresNotifier, create_engine, postgres_backend
from skincare_services.settings import Settings


@asynccontextmanager
async def database_engine(*, settings: Settings) -> AsyncIterator[AsyncEngine]:
    """The engine on the configured database, disposed of on exit."""
    engine = create_engine(settings.database_url)
    try:
        yield engine
    finally:
        await engine.dispose()


@asynccontextmanager
async def job_backend(
    *,
    settings: Settings,
    engine: AsyncEngine,
    queues: Iterable[str],
    notifier: PostgresNotifier,
) -> AsyncIterator[Backend]:
    """The configured queue backend serving the named `queues`. With SQS each named queue (the
    shop's and the configured ones) has its SQS queue and DLQ; the outbox rows and the jobs'
    ledger stay in Postgres and a relay sends the rows. On Postgres its enqueues wake the queues
    through `notifier`, the process's one (its units of work share it)."""
    async with AsyncExitStack() as stack:
        if settings.queue == "sqs":
            chosen = await _sqs_backend(stack, settings=settings, engine=engine, queues=queues)
        else:
            chosen = postgres_backend(
                engine,
                queues=queues,
                visibility_timeout=settings.visibility_timeout,
                notifier=notifier,
            )
        yield await stack.enter_async_context(chosen)


async def _sqs_backend(
    stack: AsyncExitStack, *, settings: Settings, engine: AsyncEngine, queues: Iterable[str]
) -> AbstractAsyncContextManager[Backend]:
    import anyio

    from skincare_postgres import PostgresRateLimiter, PostgresScheduleStore, postgres_job_ledger
    from skincare_services.aws import SQS_LONG_POLL_SECONDS, aws_client
    from skincare_sqs import MAX_DELAY, queue_urls, sqs_backend

    served = tuple(queues)
    ledger = await stack.enter_async_context(postgres_job_ledger(engine, window=MAX_DELAY))
    client = aws_client("sqs")
    stack.callback(client.close)
    names = dict.fromkeys([*SHOP_ROUTES.names, *settings.worker_queues, *served])
    urls = await anyio.to_thread.run_sync(
        lambda: queue_urls(client, settings.sqs_queue_prefix, names)
    )
    # Schedules and rate windows live in the ledger's database, shared by every process.
    return sqs_backend(
        client,
        urls=urls,
        ledger=ledger,
        queues=served,
        wait_time_seconds=SQS_LONG_POLL_SECONDS,
        schedules=PostgresScheduleStore(engine),
        rate_limiter=PostgresRateLimiter(engine),
    )
