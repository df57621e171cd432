"""Composition roots: one function per process builds its adapters from settings.

Nothing else in services decides which adapter runs; tests build the same objects with fakes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import boto3
from attrs import frozen
from litestar import Litestar
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.ports import DeadLetters, Queue
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.jobs.worker import Worker
from skincare_core.shop.catalogue import ShopService
from skincare_core.shop.checkout import CheckoutService
from skincare_core.shop.handlers import build_router
from skincare_core.shop.ports import EmailService, InvoiceStore
from skincare_core.shop.system_clock import SystemClock
from skincare_core.shop.webhooks import PaymentWebhookService
from skincare_email import MaildirEmailService, SmtpEmailService
from skincare_email.ses import SesEmailService
from skincare_http import ApiServices, ApiSettings, create_app
from skincare_invoice import DirectoryInvoiceStore, PdfInvoiceRenderer
from skincare_invoice.s3 import S3InvoiceStore
from skincare_postgres import PostgresDatabase, PostgresQueue, create_engine
from skincare_services.settings import Settings
from skincare_sqs import SqsQueue


@frozen
class WorkerProcess:
    """What the worker process runs."""

    worker: Worker
    relay: OutboxRelay | None


def api_app(*, settings: Settings) -> Litestar:
    """The API process: the Litestar app on the Postgres adapters."""
    engine = create_engine(settings.database_url)
    db = PostgresDatabase(engine)
    clock = SystemClock()
    services = ApiServices(
        checkout=CheckoutService(uow=db, clock=clock),
        webhooks=PaymentWebhookService(uow=db),
        shop=ShopService(uow=db),
        readiness=db,
    )
    app = create_app(services=services, settings=_api_settings(settings))
    app.on_shutdown.append(engine.dispose)
    return app


@asynccontextmanager
async def worker_process(*, settings: Settings) -> AsyncIterator[WorkerProcess]:
    """The worker process: the engine over the configured queue, the relay when it is SQS."""
    engine = create_engine(settings.database_url)
    queue: Queue | None = None
    relay_storage: PostgresQueue | None = None
    try:
        db = PostgresDatabase(engine)
        queue = job_queue(settings=settings, engine=engine)
        clock = SystemClock()
        router = build_router(
            uow=db,
            email=email_service(settings=settings),
            renderer=PdfInvoiceRenderer(),
            store=invoice_store(settings=settings),
            clock=clock,
        )
        worker = Worker(
            queue=queue,
            router=router,
            concurrency=settings.worker_concurrency,
            max_attempts=settings.max_attempts,
            visibility_timeout=settings.visibility_timeout,
            shutdown_grace=settings.shutdown_grace,
        )
        relay = None
        if isinstance(queue, SqsQueue):
            relay_storage = PostgresQueue(engine)
            relay = OutboxRelay(storage=relay_storage, sink=queue)
        yield WorkerProcess(worker, relay)
    finally:
        for closable in (queue, relay_storage):
            if isinstance(closable, PostgresQueue):
                await closable.aclose()
        await engine.dispose()


def job_queue(*, settings: Settings, engine: AsyncEngine) -> Queue:
    """The configured job queue."""
    if settings.queue == "sqs":
        return SqsQueue(
            boto3.client("sqs"),
            queue_url=settings.sqs_queue_url,
            dlq_url=settings.sqs_dlq_url,
        )
    return PostgresQueue(engine, visibility_timeout=settings.visibility_timeout)


def dead_letters(*, settings: Settings, engine: AsyncEngine) -> DeadLetters:
    """The configured queue's dead letters (both adapters implement the port)."""
    queue = job_queue(settings=settings, engine=engine)
    assert isinstance(queue, SqsQueue | PostgresQueue)
    return queue


def email_service(*, settings: Settings) -> EmailService:
    """The configured e-mail sender."""
    if settings.email == "smtp":
        return SmtpEmailService(
            host=settings.smtp_host,
            port=settings.smtp_port,
            sender=settings.email_from,
            username=settings.smtp_username or None,
            password=settings.smtp_password or None,
            security=settings.smtp_security,
        )
    if settings.email == "ses":
        return SesEmailService(boto3.client("ses"), sender=settings.email_from)
    return MaildirEmailService(settings.maildir, sender=settings.email_from)


def invoice_store(*, settings: Settings) -> InvoiceStore:
    """The configured invoice store."""
    if settings.invoice_store == "s3":
        return S3InvoiceStore(boto3.client("s3"), bucket=settings.invoice_bucket)
    return DirectoryInvoiceStore(settings.invoice_dir)


def _api_settings(settings: Settings) -> ApiSettings:
    return ApiSettings(
        jwt_secret=settings.jwt_secret,
        jwt_issuer=settings.jwt_issuer,
        webhook_secret=settings.webhook_secret,
    )
