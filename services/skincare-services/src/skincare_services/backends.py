"""The configured database engine, entering the configured queue backend, and the two queue
backends this package registers: Postgres, and SQS with its ledger in Postgres.

Used by the composition roots (the API's takes only the engine) and by the CLI's commands;
boto3 loads only with SQS.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import NO_CAPS
from skincare_core.shop.job_types import SHOP_JOBS, SHOP_ROUTES
from skincare_postgres import PostgresNotifier, create_engine, postgres_backend
from skincare_services.queue_backends import BackendContext, QueueBackend, queue_backend
from skincare_services.settings import Settings

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

    from skincare_sqs import QueueUrls

logger = logging.getLogger(__name__)


def redrive_receive_count(max_attempts: int) -> int:
    """The maxReceiveCount an SQS queue needs: one more than the most attempts any job type
    gets (the shop's policies, or `max_attempts` for the others), so the worker dead-letters
    each job itself, with its reason, and SQS moves only what a dying worker left."""
    return max(max_attempts, *(p.attempts for p in SHOP_JOBS.retry_policies.values())) + 1


def configured_engine(settings: Settings) -> AsyncEngine:
    """An engine on the configured database with the configured timeouts, which the queue's
    and the notifier's own connections take from it too."""
    return create_engine(
        settings.database_url,
        connect_timeout=timedelta(seconds=settings.database_connect_timeout_seconds),
        statement_timeout=timedelta(seconds=settings.database_statement_timeout_seconds),
    )


@asynccontextmanager
async def database_engine(*, settings: Settings) -> AsyncIterator[AsyncEngine]:
    """The configured engine (`configured_engine`), disposed of on exit."""
    engine = configured_engine(settings)
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
    """The backend SKINCARE_QUEUE names (see `queue_backends`), serving the named `queues`.
    Its enqueues wake the queues through `notifier`, the process's one (its units of work
    share it)."""
    served = tuple(queues)
    context = BackendContext(
        settings=settings,
        engine=engine,
        notifier=notifier,
        queues=served,
        known_queues=tuple(dict.fromkeys([*SHOP_ROUTES.names, *settings.worker_queues, *served])),
        max_receives=redrive_receive_count(settings.max_attempts),
    )
    async with queue_backend(settings.queue).open(context) as backend:
        yield backend


def _postgres(context: BackendContext) -> AbstractAsyncContextManager[Backend]:
    return postgres_backend(
        context.engine,
        queues=context.queues,
        visibility_timeout=context.visibility_timeout,
        notifier=context.notifier,
        caps=context.settings.concurrency_caps,
        history=context.settings.history == "on",
    )


@asynccontextmanager
async def _sqs(context: BackendContext) -> AsyncIterator[Backend]:
    import anyio

    from skincare_postgres import (
        PostgresMinuteStore,
        PostgresPauses,
        PostgresRateLimiter,
        PostgresScheduleStore,
        postgres_job_ledger,
    )
    from skincare_services.aws import SQS_LONG_POLL_SECONDS, aws_client
    from skincare_sqs import MAX_DELAY, queue_urls, sqs_backend

    engine, prefix = context.engine, context.settings.sqs_queue_prefix
    async with AsyncExitStack() as stack:
        keeping = context.settings.history == "on"
        ledger = await stack.enter_async_context(
            postgres_job_ledger(engine, window=MAX_DELAY, history=keeping)
        )
        client = aws_client("sqs")
        stack.callback(client.close)
        urls = await anyio.to_thread.run_sync(
            lambda: queue_urls(client, prefix, context.known_queues)
        )
        await anyio.to_thread.run_sync(
            lambda: warn_short_redrive(client, urls, context.queues, context.max_receives)
        )
        # Schedules, rate windows and pauses live in the ledger's database, shared by every
        # process.
        backend = sqs_backend(
            client,
            urls=urls,
            ledger=ledger,
            queues=context.queues,
            wait_time_seconds=SQS_LONG_POLL_SECONDS,
            schedules=PostgresScheduleStore(engine),
            rate_limiter=PostgresRateLimiter(engine),
            # Only a process that serves queues claims: the CLI's reads run without caps.
            caps=context.settings.concurrency_caps if context.queues else NO_CAPS,
            # A slot is held as long as the job's lease: the heartbeat extends both.
            cap_lease=context.visibility_timeout,
            pauses=PostgresPauses(engine),
            minutes=PostgresMinuteStore(engine),
            history=ledger.history,
        )
        yield await stack.enter_async_context(backend)


POSTGRES = QueueBackend(open=_postgres)
"""The jobs table: the unit of work's outbox row is the queue row (entry point `postgres`)."""

SQS = QueueBackend(open=_sqs, required_settings=("sqs_queue_prefix",), ordered=False)
"""An SQS queue and DLQ per named queue, the outbox and ledger in the database, and a relay
between them (entry point `sqs`); boto3 loads only when it is opened."""


def warn_short_redrive(
    client: SQSClient, urls: Mapping[str, QueueUrls], served: Iterable[str], needed: int
) -> None:
    """Log a warning for each served queue whose redrive policy moves messages to the DLQ
    before the retry policies are done with them (below `needed` receives). Blocking."""
    from skincare_sqs.provisioning import max_receive_count

    for queue in served:
        count = max_receive_count(client, urls[queue].queue_url)
        if count is not None and count < needed:
            fields = {"queue": queue, "max_receive_count": count, "needed": needed}
            logger.warning("sqs.redrive_before_retries_end", extra=fields)
