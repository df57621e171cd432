"""The shop's adapters built from settings: the e-mail sender, the invoice store, and the shop's
job types served over them (each traced when the process traces)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skincare_core.jobs.definitions import Definitions
from skincare_core.shop.handlers import shop_definitions as served_shop_jobs
from skincare_core.shop.ports import EmailService, InvoiceStore
from skincare_core.shop.system_clock import SystemClock
from skincare_core.shop.unit_of_work import UnitOfWorkFactory
from skincare_email import MaildirEmailService, SmtpEmailService
from skincare_invoice import DirectoryInvoiceStore, PdfInvoiceRenderer
from skincare_services.settings import Settings
from skincare_services.tracing import traced_email, traced_renderer

if TYPE_CHECKING:
    from skincare_otel import Tracing


def shop_definitions(
    *, settings: Settings, uow: UnitOfWorkFactory, tracing: Tracing | None = None
) -> Definitions:
    """The shop's job types on the configured e-mail sender and invoice store (the daily sales
    summary only with SKINCARE_ADMIN_EMAIL); with `tracing`, each send and render is a span."""
    return served_shop_jobs(
        uow=uow,
        email=traced_email(email_service(settings=settings), tracing),
        renderer=traced_renderer(PdfInvoiceRenderer(), tracing),
        store=invoice_store(settings=settings),
        clock=SystemClock(),
        admin_email=settings.admin_email or None,
    )


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
        from skincare_email.ses import SesEmailService
        from skincare_services.aws import aws_client

        return SesEmailService(aws_client("ses"), sender=settings.email_from)
    return MaildirEmailService(settings.maildir, sender=settings.email_from)


def invoice_store(*, settings: Settings) -> InvoiceStore:
    """The configured invoice store."""
    if settings.invoice_store == "s3":
        from skincare_invoice.s3 import S3InvoiceStore
        from skincare_services.aws import aws_client

        return S3InvoiceStore(aws_client("s3"), bucket=settings.invoice_bucket)
    return DirectoryInvoiceStore(settings.invoice_dir)
