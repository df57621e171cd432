"""Composition roots: one function per process builds its adapters from settings.

Nothing else in services decides which adapter runs (the queue backend is the one SKINCARE_QUEUE
names, entered through `backends.job_backend`); tests build the same objects with fakes.
Heavy adapters are imported by the function that builds them, when it builds them: a worker never
loads Litestar, and boto3 loads only where SQS, SES or S3 is configured.
"""

from __future__ import annotations

import hmac
import random
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING

import anyio
from attrs import frozen

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.definitions import Definitions
from skincare_core.jobs.history import HistoryCleaner, Retention
from skincare_core.jobs.metrics import JobMetrics, NoMetrics
from skincare_core.jobs.minutes import MinuteFlusher, MinuteRecorder, TeeMetrics
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.jobs.retry import full_jitter_delay
from skincare_core.jobs.router import Handler, Router
from skincare_core.jobs.scheduler import Scheduler, Schedules
from skincare_core.jobs.tracing import JobTracer
from skincare_core.jobs.worker import Worker
from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.shop.system_clock import SystemClock
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_postgres import PostgresDatabase, PostgresNotifier
from skincare_services.backends import configured_engine, database_engine, job_backend
from skincare_services.queue_backends import queue_backend
from skincare_services.scheduling import (
    NotSupportedHere,
    process_schedules,
    scheduler_for,
    throttle_for,
    throttle_job_types,
)
from skincare_services.setting_values import served_queues
from skincare_services.settings import Settings
from skincare_services.shop_adapters import shop_definitions
from skincare_services.tracing import job_headers, job_tracer, process_tracing

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.plugins import PluginProtocol

    from skincare_http import ApiSettings
    from skincare_otel import Tracing
    from skincare_prometheus import WorkerEndpoint

NO_HANDLERS: Mapping[str, Handler] = MappingProxyType({})
NO_DEFINITIONS = Definitions()


@frozen
class WorkerProcess:
    """What the worker process runs: one worker per named queue it serves, the relay, the
    /metrics and /healthz endpoint (None without SKINCARE_METRICS_PORT), the scheduler, the
    history's cleaner (None when the backend keeps no history) and the flusher of its
    per-minute counts of each job type (None where the backend keeps none)."""

    workers: Mapping[str, Worker]
    relay: OutboxRelay | None
    endpoint: WorkerEndpoint | None = None
    scheduler: Scheduler | None = None
    minutes: MinuteFlusher | None = None
    cleaner: HistoryCleaner | None = None


def api_app(*, settings: Settings) -> Litestar:
    """The API process: the Litestar app on the Postgres adapters."""
    from skincare_http import ApiServices, create_app

    tracing = process_tracing(settings, service="api")
    engine = configured_engine(settings)
    db = PostgresDatabase(
        engine,
        routes=SHOP_ROUTES,
        job_headers=job_headers(tracing),
        ordered=queue_backend(settings.queue).ordered,
    )
    clock = SystemClock()
    checkout = CheckoutService(uow=db, clock=clock, payment_window=settings.payment_window)
    services = ApiServices(
        checkout=checkout,
        webhooks=PaymentWebhookService(uow=db),
        shop=ShopService(uow=db),
        readiness=db,
    )
    plugins = [] if tracing is None else [_tracing_plugin(tracing)]
    app = create_app(services=services, settings=_api_settings(settings), plugins=plugins)
    app.on_shutdown.append(engine.dispose)
    return app


def ops_app(*, settings: Settings, backend: Backend) -> Litestar:
    """The `skincare ops` page over this backend, for the configured named queues."""
    from skincare_core.jobs.ops import OpsService
    from skincare_http.ops import OpsSettings, create_ops_app

    # The CSRF secret is derived, not another setting: it only has to be secret and stable.
    csrf = hmac.new(settings.jwt_secret.encode(), b"skincare-ops-csrf", "sha256").hexdigest()
    ops_settings = OpsSettings(
        jwt_secret=settings.jwt_secret,
        jwt_issuer=settings.jwt_issuer,
        ops_token=settings.ops_token or None,
        csrf_secret=csrf,
    )
    names = tuple(settings.worker_queues)
    ops = OpsService(
        dead_letters=backend.dead_letters,
        stats=backend.stats,
        queue_names=names,
        outcomes=backend.outcomes,
        pauses=backend.pauses,
        actions=backend.actions,
        history=backend.history,
        minutes=backend.minutes,
    )
    return create_ops_app(ops=ops, settings=ops_settings)


@asynccontextmanager
async def worker_process(
    *,
    settings: Settings,
    handlers: Mapping[str, Handler] = NO_HANDLERS,
    definitions: Definitions = NO_DEFINITIONS,
    queues: Sequence[str] | None = None,
    schedules: Schedules | None = None,
) -> AsyncIterator[WorkerProcess]:
    """The worker process: a worker per named queue over the configured backend, and the relay
    it needs.

    `handlers` (job type -> handler) are served beside the shop's job types: this is how another
    team adds its own job types without editing core or services; so are `definitions` (typed
    job types), which bring their queues, retry policies and timeouts with them (each worker
    runs their sync handlers in threads of its own, at most one per job slot). A type served
    twice is a ValueError; a definition's queue that SKINCARE_WORKER_QUEUES does not name is
    NotSupportedHere. `queues` serves a subset of `settings.worker_queues` (None: all of
    them); a name not in it is a ValueError. `schedules` (periodic jobs declared in code) are
    enqueued by a scheduler in this process, each tick once whatever the number of worker
    processes, with the shop's daily sales summary when SKINCARE_ADMIN_EMAIL is set.
    """
    served = served_queues(settings.worker_queues, queues)
    _check_queues(settings, definitions)
    every_schedule = process_schedules(settings, schedules)
    tracing = process_tracing(settings, service="worker")
    async with AsyncExitStack() as stack:
        engine = await stack.enter_async_context(database_engine(settings=settings))
        # One notifier (one connection) wakes the queues for every enqueue of this process.
        notifier = PostgresNotifier(engine)
        backend = await stack.enter_async_context(
            job_backend(settings=settings, engine=engine, queues=served, notifier=notifier)
        )
        # A handler's follow-up jobs carry its job's trace context on.
        uow = PostgresDatabase(
            engine,
            routes=SHOP_ROUTES,
            job_headers=job_headers(tracing),
            notifier=notifier,
            ordered=queue_backend(settings.queue).ordered,
        )
        jobs = shop_definitions(settings=settings, uow=uow, tracing=tracing) + definitions
        router = Router()
        for job_type, handler in handlers.items():
            router.register(job_type, handler)
        relay = None
        if backend.outbox is not None:
            relay = OutboxRelay(storage=backend.outbox, sink=backend.sink)
        metrics: JobMetrics = NoMetrics()
        endpoint = None
        if settings.metrics_port:
            from skincare_services.worker_metrics import worker_metrics

            built = worker_metrics(settings=settings, engine=engine, backend=backend, queues=served)
            metrics, endpoint = built.jobs, built.endpoint
        flusher = None
        if backend.minutes is not None:
            recorder = MinuteRecorder()
            metrics, flusher = (
                TeeMetrics(metrics, recorder),
                MinuteFlusher(recorder, backend.minutes),
            )
        workers = {
            name: _worker(
                settings=settings,
                backend=backend,
                router=_queue_router(settings, backend, router, jobs, name),
                definitions=jobs,
                queue=name,
                metrics=metrics,
                tracer=job_tracer(tracing),
            )
            for name in served
        }
        yield WorkerProcess(
            workers,
            relay,
            endpoint=endpoint,
            scheduler=scheduler_for(backend, every_schedule),
            minutes=flusher,
            cleaner=history_cleaner(settings, backend),
        )


def history_cleaner(settings: Settings, backend: Backend) -> HistoryCleaner | None:
    """Prunes the backend's history by the configured retentions (every worker process runs
    one; the backend lets one at a time prune); None without a history."""
    if backend.history is None:
        return None
    retention = Retention(
        done=settings.history_done_retention, dead=settings.history_dead_retention
    )
    return HistoryCleaner(backend.history, retention)


def _tracing_plugin(tracing: Tracing) -> PluginProtocol:
    from skincare_otel import litestar_plugin

    return litestar_plugin(tracing)


def _api_settings(settings: Settings) -> ApiSettings:
    from skincare_http import ApiSettings

    return ApiSettings(
        jwt_secret=settings.jwt_secret,
        jwt_issuer=settings.jwt_issuer,
        webhook_secret=settings.webhook_secret,
    )


def _check_queues(settings: Settings, definitions: Definitions) -> None:
    for definition in definitions:
        if definition.queue not in settings.worker_queues:
            raise NotSupportedHere(
                f"job type {definition.name!r} goes to queue {definition.queue!r}, which"
                " SKINCARE_WORKER_QUEUES does not name"
            )


def _queue_router(
    settings: Settings, backend: Backend, base: Router, definitions: Definitions, queue: str
) -> Router:
    """`base` and the definitions' handlers for one queue's worker (sync handlers in threads of
    its own, one per job slot), the job types SKINCARE_RATE_LIMITS names throttled."""
    threads = anyio.CapacityLimiter(settings.worker_queues[queue])
    router = definitions.router(threads, into=base.copy())
    throttle_job_types(settings=settings, backend=backend, router=router)
    return router


def _worker(
    *,
    settings: Settings,
    backend: Backend,
    router: Router,
    definitions: Definitions,
    queue: str,
    metrics: JobMetrics,
    tracer: JobTracer | None,
) -> Worker:
    return Worker(
        queue=backend.queue(queue),
        router=router,
        concurrency=settings.worker_queues[queue],
        max_attempts=settings.max_attempts,
        # Full jitter for a team's own job types too; the shop's types have their own policies.
        backoff=_jittered_backoff(random.Random()),
        retry_policies=definitions.retry_policies,
        # SKINCARE_JOB_TIMEOUTS overrides a definition's own timeout.
        job_timeouts={**definitions.timeouts, **settings.job_timeouts},
        visibility_timeout=settings.visibility_timeout,
        shutdown_grace=settings.shutdown_grace,
        metrics=metrics,
        tracer=tracer,
        throttle=throttle_for(settings=settings, backend=backend, queue=queue),
    )


def _jittered_backoff(rng: random.Random) -> Callable[[int], timedelta]:
    def delay(attempts: int) -> timedelta:
        return full_jitter_delay(attempts, rng)

    return delay
